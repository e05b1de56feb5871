/* The CPU backend's loops for x86-64 CPUs with AVX-512 F, BW, DQ and VL (Intel Skylake-SP, AMD Zen 4
 * and later).  Contraction stays off, so FMA never changes a result. */
#include "cpu/kernels.h"

#ifdef GP_CPU_X86
#include <immintrin.h>

#define GP_NATIVE_BYTES 64
#define GP_ISA_NAME "avx512"
#define GP_ISA_TARGET "avx512f,avx512bw,avx512dq,avx512vl,avx2,fma"
#define GP_ISA_FILL gp_cpu_fill_kernels_avx512
#include "cpu/isa_begin.h"

/* Hooks (see simd_kernels.h), each the generic code's bits in fewer instructions.  Widenings: one
 * instruction each, exact. */
#define GP_ISA_WIDEN 1
#define WIDEN static inline __attribute__((always_inline))
WIDEN gp_f64v gp_widen_f32(gp_f32h v) { return (gp_f64v)_mm512_cvtps_pd((__m256)v); }
WIDEN gp_f64v gp_widen_i32_f64(gp_i32h v) { return (gp_f64v)_mm512_cvtepi32_pd((__m256i)v); }
WIDEN gp_u64v gp_widen_i32(gp_i32h v) { return (gp_u64v)_mm512_cvtepi32_epi64((__m256i)v); }
WIDEN gp_u64v gp_widen_u32(gp_u32h v) { return (gp_u64v)_mm512_cvtepu32_epi64((__m256i)v); }
WIDEN gp_u64v gp_widen_i16(gp_i16q v) { return (gp_u64v)_mm512_cvtepi16_epi64((__m128i)v); }
WIDEN gp_u64v gp_widen_u16(gp_u16q v) { return (gp_u64v)_mm512_cvtepu16_epi64((__m128i)v); }
WIDEN __m128i low_half(gp_u8e v) { return (__m128i)__builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7); }
WIDEN gp_u64v gp_widen_i8(gp_i8e v) { return (gp_u64v)_mm512_cvtepi8_epi64(low_half((gp_u8e)v)); }
WIDEN gp_u64v gp_widen_u8(gp_u8e v) { return (gp_u64v)_mm512_cvtepu8_epi64(low_half(v)); }

/* float32/float64 min and max as VMINPS/VMAXPS (dst = src1 < src2 ? src1 : src2, src2 on NaNs and
 * ties: the generic selections' bits); the flags are the lanes that stayed ordered, in a mask
 * register that each compare masks in turn. */
#define GP_ISA_FLOAT_MINMAX 1
typedef __mmask16 gp_nans32;
typedef __mmask8 gp_nans64;
WIDEN gp_nans32 gp_no_nans32(void) { return (gp_nans32)0xffff; }
WIDEN gp_nans64 gp_no_nans64(void) { return (gp_nans64)0xff; }
WIDEN gp_f32v gp_min_f32(gp_f32v v, gp_f32v a) { return (gp_f32v)_mm512_min_ps((__m512)v, (__m512)a); }
WIDEN gp_f32v gp_max_f32(gp_f32v v, gp_f32v a) { return (gp_f32v)_mm512_max_ps((__m512)v, (__m512)a); }
WIDEN gp_f64v gp_min_f64(gp_f64v v, gp_f64v a) { return (gp_f64v)_mm512_min_pd((__m512d)v, (__m512d)a); }
WIDEN gp_f64v gp_max_f64(gp_f64v v, gp_f64v a) { return (gp_f64v)_mm512_max_pd((__m512d)v, (__m512d)a); }
WIDEN gp_nans32 gp_nans_f32(gp_nans32 ordered, gp_f32v v)
{
    return _mm512_mask_cmp_ps_mask(ordered, (__m512)v, (__m512)v, _CMP_ORD_Q);
}
WIDEN gp_nans64 gp_nans_f64(gp_nans64 ordered, gp_f64v v)
{
    return _mm512_mask_cmp_pd_mask(ordered, (__m512d)v, (__m512d)v, _CMP_ORD_Q);
}
WIDEN int gp_any_nans32(gp_nans32 ordered) { return ordered != 0xffff; }
WIDEN int gp_any_nans64(gp_nans64 ordered) { return ordered != 0xff; }

/* 4- and 8-byte integer min and max in one instruction (VPMINSD ...). */
#define GP_ISA_INT_MINMAX 1
WIDEN gp_i32v gp_min_i32(gp_i32v v, gp_i32v a) { return (gp_i32v)_mm512_min_epi32((__m512i)v, (__m512i)a); }
WIDEN gp_i32v gp_max_i32(gp_i32v v, gp_i32v a) { return (gp_i32v)_mm512_max_epi32((__m512i)v, (__m512i)a); }
WIDEN gp_u32v gp_min_u32(gp_u32v v, gp_u32v a) { return (gp_u32v)_mm512_min_epu32((__m512i)v, (__m512i)a); }
WIDEN gp_u32v gp_max_u32(gp_u32v v, gp_u32v a) { return (gp_u32v)_mm512_max_epu32((__m512i)v, (__m512i)a); }
WIDEN gp_i64v gp_min_i64(gp_i64v v, gp_i64v a) { return (gp_i64v)_mm512_min_epi64((__m512i)v, (__m512i)a); }
WIDEN gp_i64v gp_max_i64(gp_i64v v, gp_i64v a) { return (gp_i64v)_mm512_max_epi64((__m512i)v, (__m512i)a); }
WIDEN gp_u64v gp_min_u64(gp_u64v v, gp_u64v a) { return (gp_u64v)_mm512_min_epu64((__m512i)v, (__m512i)a); }
WIDEN gp_u64v gp_max_u64(gp_u64v v, gp_u64v a) { return (gp_u64v)_mm512_max_epu64((__m512i)v, (__m512i)a); }

/* Lane windows as VALIGND/VALIGNQ: (a, b) from `by` lanes before b. */
#define GP_ISA_LANE_SHIFTS 1
WIDEN gp_f32v gp_window_f32(gp_f32v a, gp_f32v b, int by)
{
    const __m512i low = (__m512i)a, high = (__m512i)b;
    switch (by) {
    case 1: return (gp_f32v)_mm512_alignr_epi32(high, low, 15);
    case 2: return (gp_f32v)_mm512_alignr_epi32(high, low, 14);
    case 4: return (gp_f32v)_mm512_alignr_epi32(high, low, 12);
    default: return (gp_f32v)_mm512_alignr_epi32(high, low, 8);
    }
}
WIDEN gp_u64v gp_window_u64(gp_u64v a, gp_u64v b, int by)
{
    const __m512i low = (__m512i)a, high = (__m512i)b;
    switch (by) {
    case 1: return (gp_u64v)_mm512_alignr_epi64(high, low, 7);
    case 2: return (gp_u64v)_mm512_alignr_epi64(high, low, 6);
    default: return (gp_u64v)_mm512_alignr_epi64(high, low, 4);
    }
}
#undef WIDEN

#include "cpu/simd_kernels.h"
#endif
