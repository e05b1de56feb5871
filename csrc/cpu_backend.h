/* The CPU backend: plain C, single-threaded, same results as the CUDA backend. */
#ifndef GP_CPU_BACKEND_H
#define GP_CPU_BACKEND_H

#include "gp_types.h"

int gp_cpu_reduce(const gp_reduce_desc *desc, gp_error *err);
int gp_cpu_scan(const gp_scan_desc *desc, gp_error *err);
/* cpu_transpose.c: C-contiguous copy of a strided view. */
int gp_cpu_copy_strided(const gp_copy_desc *desc, gp_error *err);

#endif
