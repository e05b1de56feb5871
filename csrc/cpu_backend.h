/* The CPU backend: plain C, single-threaded, same results as the CUDA backend. */
#ifndef GP_CPU_BACKEND_H
#define GP_CPU_BACKEND_H

#include "gp_types.h"

int gp_cpu_reduce(const gp_reduce_desc *desc, gp_error *err);
int gp_cpu_scan(const gp_scan_desc *desc, gp_error *err);
/* cpu_transpose.c: C-contiguous copy of a strided view. */
int gp_cpu_copy_strided(const gp_copy_desc *desc, gp_error *err);

int gp_cpu_correlate(const gp_correlate_desc *desc, gp_error *err); /* cpu_convolve.c */

/* Element conversion shared by the CPU primitives: count elements of dtype t to or from doubles
 * (f non-NULL; any dtype) or else 64-bit two's complement words (u; integer and bool dtypes, and
 * narrower integers keep the low bits on the way back: NumPy's wrap-around). */
void gp_cpu_load(gp_dtype t, const void *src, int64_t count, double *f, uint64_t *u);
void gp_cpu_store(gp_dtype t, const double *f, const uint64_t *u, int64_t count, void *dst);

#endif
