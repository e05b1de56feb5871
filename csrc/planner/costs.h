/* The cost model the planner routes host calls by: a call's time on the CPU backend and on the GPU,
 * from the primitive's constants (the planner's table, primitives.c) and the bus's (costs.c), all
 * measured on the machine and overridable through GPUPRIMS_COSTS, a comma list of name=value:
 * "reduce.cpu_gbps=12,h2d_gbps=20" (a primitive's constant is named after it). */
#ifndef GP_PLANNER_COSTS_H
#define GP_PLANNER_COSTS_H

#include "contract/gp_plan.h"
#include "planner/primitives.h"

/* glibc's malloc reuses freed blocks below its largest mmap threshold (32 MiB on 64-bit Linux) and
 * maps larger ones afresh, so every larger result's pages fault in when first written: on the H100
 * machine a CPU prefix_sum of 2^22 float32 (16 MiB out) took 0.21 ms, of 2^24 (64 MiB) 5.1 ms.  The
 * default of fresh_min_bytes, and where the planner has such results touched first. */
#define GP_FRESH_MIN_BYTES ((size_t)32 << 20)

typedef struct {
    gp_primitive_costs primitive[GP_NUM_PRIMITIVES];
    double h2d_gbps, d2h_gbps; /* the short path's copies from and to pageable memory, bytes per ns */
    double pinned_gbps;        /* copies from or to page-locked memory */
    double stream_fixed_us;    /* a streamed call's time beyond its copies */
    double stream_gbps;        /* a streamed call from pageable memory: bytes of its larger side per ns */
    double fresh_min_bytes;    /* host results from this size come in fresh pages, faulted in as written */
} gp_costs;

/* The measured constants with `setting` (GPUPRIMS_COSTS's value, or NULL) applied; GP_ERR_INVALID for
 * a name or value it cannot read. */
int gp_costs_current(gp_costs *costs, const char *setting, gp_error *err);

/* Estimated microseconds of a host call with traffic t on the CPU backend, and on the GPU by `route`
 * (short or streamed), its input or result pinned or not. */
double gp_cost_cpu_us(const gp_costs *costs, gp_primitive primitive, const gp_traffic *t);
double gp_cost_cuda_us(const gp_costs *costs, gp_primitive primitive, const gp_traffic *t, gp_route route,
                       int input_pinned, int result_pinned);

#endif
