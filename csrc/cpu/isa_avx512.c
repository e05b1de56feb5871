/* The CPU backend's loops for x86-64 CPUs with AVX-512 F, BW, DQ and VL (Intel Skylake-SP, AMD Zen 4
 * and later).  Contraction stays off, so FMA never changes a result. */
#include "cpu/kernels.h"

#ifdef GP_CPU_X86
#include <immintrin.h>

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")
#endif

#include "cpu/simd.h"

/* Widenings in one instruction each (see simd_kernels.h): exact, so the same bits as the generic
 * ones. */
#define GP_ISA_WIDEN 1
#define WIDEN static inline __attribute__((always_inline))
WIDEN gp_f64x8 gp_widen_f32(gp_f32x8 v) { return (gp_f64x8)_mm512_cvtps_pd((__m256)v); }
WIDEN gp_f64x8 gp_widen_i32_f64(gp_i32x8 v) { return (gp_f64x8)_mm512_cvtepi32_pd((__m256i)v); }
WIDEN gp_u64x8 gp_widen_i32(gp_i32x8 v) { return (gp_u64x8)_mm512_cvtepi32_epi64((__m256i)v); }
WIDEN gp_u64x8 gp_widen_u32(gp_u32x8 v) { return (gp_u64x8)_mm512_cvtepu32_epi64((__m256i)v); }
WIDEN gp_u64x8 gp_widen_i16(gp_i16x8 v) { return (gp_u64x8)_mm512_cvtepi16_epi64((__m128i)v); }
WIDEN gp_u64x8 gp_widen_u16(gp_u16x8 v) { return (gp_u64x8)_mm512_cvtepu16_epi64((__m128i)v); }
WIDEN __m128i low_half(gp_u8x8 v) { return (__m128i)__builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7); }
WIDEN gp_u64x8 gp_widen_i8(gp_i8x8 v) { return (gp_u64x8)_mm512_cvtepi8_epi64(low_half((gp_u8x8)v)); }
WIDEN gp_u64x8 gp_widen_u8(gp_u8x8 v) { return (gp_u64x8)_mm512_cvtepu8_epi64(low_half(v)); }
#undef WIDEN

#define GP_ISA_NAME "avx512"
#include "cpu/simd_kernels.h"

void gp_cpu_fill_kernels_avx512(gp_cpu_kernels *table) { fill_table(table); }

#ifdef __clang__
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif
