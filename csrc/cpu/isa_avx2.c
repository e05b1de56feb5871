/* The CPU backend's loops for x86-64 CPUs with AVX2 and FMA (Intel Haswell, AMD Zen and
 * later).  Contraction stays off, so FMA never changes a result. */
#include "cpu/kernels.h"

#ifdef GP_CPU_X86
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif

#define GP_ISA_NAME "avx2"
#include "cpu/simd_kernels.h"

void gp_cpu_fill_kernels_avx2(gp_cpu_kernels *table) { fill_table(table); }

#ifdef __clang__
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif
