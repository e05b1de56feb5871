/* What the planner knows of each primitive: one row per primitive in the planner's table
 * (primitives.c).  Adding a primitive means its backend files plus one row here. */
#ifndef GP_PLANNER_PRIMITIVES_H
#define GP_PLANNER_PRIMITIVES_H

#include <stddef.h>

#include "contract/gp_call.h"
#include "contract/gp_error.h"

/* What a call moves and computes. */
typedef struct {
    size_t in_bytes, out_bytes; /* read (the span a strided input covers) and written */
    size_t in_offset;           /* bytes from the start of the input's span to call->in */
    int64_t elements;           /* what a GPU call's workspace scales with (GP_WORKSPACE_BYTES_PER_ELEMENT) */
    double macs;                /* multiply-adds beyond the memory traffic (correlate) */
} gp_traffic;

/* A primitive's constants of the cost model (costs.h), measured on the machine: see the table. */
typedef struct {
    double cpu_fixed_us;     /* the CPU backend's time for a tiny call, the Python layer included */
    double cpu_gbps;         /* bytes the CPU backend reads and writes per ns */
    double cpu_gmacs;        /* multiply-adds the CPU backend does per ns (0: none counted) */
    double cpu_fresh_gbps;   /* bytes per ns of a large new result's fresh pages, which the host threads
                              * fault in before either route writes it (from fresh_min_bytes, costs.h;
                              * 0: none counted) */
    double cuda_fixed_us;    /* the GPU short path's time for a tiny call: allocation, copies, launches, wait */
    double cuda_gmacs;       /* multiply-adds the GPU does per ns */
    double stream_min_bytes; /* host inputs from this size stream on the GPU (GPUPRIMS_STREAM_MIN_BYTES) */
} gp_primitive_costs;

typedef struct {
    const char *name;
    int (*check)(const gp_call *call, gp_error *err); /* the call's arguments are supported */
    gp_traffic (*traffic)(const gp_call *call);
    int (*cpu)(const gp_call *call, gp_error *err);   /* the CPU backend; NULL: device data only */
    int streams;                                      /* host calls may stream on the GPU */
    gp_primitive_costs costs;
} gp_primitive_row;

extern const gp_primitive_row gp_primitives[GP_NUM_PRIMITIVES];

#endif
