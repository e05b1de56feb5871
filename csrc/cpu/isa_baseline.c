/* The CPU backend's loops for any CPU: the compiler's baseline instruction set (SSE2 on x86-64,
 * Advanced SIMD on aarch64), 16-byte vectors. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif
#define GP_NATIVE_BYTES 16
#define GP_ISA_NAME "baseline"
#include "cpu/simd_kernels.h"

void gp_cpu_fill_kernels_baseline(gp_cpu_kernels *table) { fill_table(table); }
