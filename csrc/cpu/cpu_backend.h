/* The CPU backend: C with the compiler's vector extensions, with the CUDA backend's results.  One
 * entry per primitive, each running a planned call (csrc/planner/) whose in and out are host
 * addresses: the drivers (reduce.c, scan.c, correlate.c, copy.c) cut the call into pieces for the
 * host thread pool and run the typed loops of kernels.h on them. */
#ifndef GP_CPU_BACKEND_H
#define GP_CPU_BACKEND_H

#include <stdatomic.h>

#include "contract/gp_call.h"
#include "contract/gp_error.h"
#include "cpu/gather.h" /* gp_cpu_gather: how the drivers read a call's in_view piece by piece */

int gp_cpu_reduce(const gp_call *call, gp_error *err);    /* reduce.c */
int gp_cpu_scan(const gp_call *call, gp_error *err);      /* scan.c */
int gp_cpu_correlate(const gp_call *call, gp_error *err); /* correlate.c */
int gp_cpu_copy(const gp_call *call, gp_error *err);      /* copy.c: C-contiguous copy of a strided view */
/* copy.c: a thread's buffer for gp_cpu_gather's pieces (GP_CPU_PIECE elements of the view), freed
 * by the caller: NULL for no view (a contiguous input), and also, with *out_of_memory set, when no
 * memory is left. */
char *gp_cpu_piece_buffer(const gp_copy_args *view, atomic_int *out_of_memory);

/* elements.c: count doubles as float dtype t (GP_FLOAT16, GP_FLOAT32 or GP_FLOAT64), each rounded
 * once to nearest even; float16 to float (exact) and back (rounded to nearest even). */
void gp_cpu_store_doubles(gp_dtype t, const double *f, int64_t count, void *dst);
void gp_cpu_half_to_float(const gp_half *src, int64_t count, float *dst);
void gp_cpu_half_from_float(const float *src, int64_t count, gp_half *dst);

#endif
