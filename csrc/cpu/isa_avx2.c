/* The CPU backend's loops for x86-64 CPUs with AVX2 and FMA (Intel Haswell, AMD Zen and
 * later), 32-byte vectors.  Contraction stays off, so FMA never changes a result. */
#include "cpu/kernels.h"

#ifdef GP_CPU_X86
#include <immintrin.h>

#define GP_NATIVE_BYTES 32
#define GP_ISA_NAME "avx2"
#define GP_ISA_TARGET "avx2,fma"
#define GP_ISA_FILL gp_cpu_fill_kernels_avx2
#include "cpu/isa_begin.h"

/* Widenings in one instruction each (see simd_kernels.h; GCC 12 builds them from 128-bit pieces
 * through the stack): exact, so the generic ones' bits. */
#define GP_ISA_WIDEN 1
#define WIDEN static inline __attribute__((always_inline))
WIDEN __m128i bytes16_of8(gp_i16q v) { return (__m128i)__builtin_shufflevector(v, v, 0, 1, 2, 3, 0, 1, 2, 3); }
WIDEN __m128i bytes16_of4(gp_u8e v)
{
    return (__m128i)__builtin_shufflevector(v, v, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3);
}
WIDEN gp_f64v gp_widen_f32(gp_f32h v) { return (gp_f64v)_mm256_cvtps_pd((__m128)v); }
WIDEN gp_f64v gp_widen_i32_f64(gp_i32h v) { return (gp_f64v)_mm256_cvtepi32_pd((__m128i)v); }
WIDEN gp_u64v gp_widen_i32(gp_i32h v) { return (gp_u64v)_mm256_cvtepi32_epi64((__m128i)v); }
WIDEN gp_u64v gp_widen_u32(gp_u32h v) { return (gp_u64v)_mm256_cvtepu32_epi64((__m128i)v); }
WIDEN gp_u64v gp_widen_i16(gp_i16q v) { return (gp_u64v)_mm256_cvtepi16_epi64(bytes16_of8(v)); }
WIDEN gp_u64v gp_widen_u16(gp_u16q v) { return (gp_u64v)_mm256_cvtepu16_epi64(bytes16_of8((gp_i16q)v)); }
WIDEN gp_u64v gp_widen_i8(gp_i8e v) { return (gp_u64v)_mm256_cvtepi8_epi64(bytes16_of4((gp_u8e)v)); }
WIDEN gp_u64v gp_widen_u8(gp_u8e v) { return (gp_u64v)_mm256_cvtepu8_epi64(bytes16_of4(v)); }

#undef WIDEN

#include "cpu/simd_kernels.h"
#endif
