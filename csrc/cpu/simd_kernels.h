/* The CPU backend's typed loops (see kernels.h), written once with the generic vectors of simd.h
 * and generated per dtype from the dtype table.  Included by isa_*.c, each of which compiles it for
 * one instruction set (GP_ISA_NAME) and calls fill_table from its table's fill function.
 *
 * Every loop fixes its order of operations by element index alone (never by address, thread or
 * instruction set), so that a result is the same bits on every path.  Floating-point contraction
 * is off (isa_*.c), so a * b + c is two roundings everywhere.
 *
 * Reductions (gp_reduce_run_fn, gp_reduce_columns_fn):
 *   - min/max keep the input's type; float16 is compared through integer keys of its bits.  NaN
 *     wins: the contiguous loop keeps a NaN mask beside the lanes and, when it is set, returns the
 *     first NaN of its piece; the column loop never lets a NaN leave its accumulator.
 *   - integer sums and products run in 64-bit lanes (uint64_t wraps as NumPy's int64 does).
 *   - float sums of every float dtype run in double: blocks of 256 elements in 32 double lanes (8
 *     additions per lane), then the blocks pairwise (a binary counter of partial sums: the pairwise
 *     tree of the blocks).  A float32 or float16 result is then the correctly rounded sum but for
 *     near-ties, never further from the exact sum than NumPy's float32 pairwise sum.  (Summing in
 *     float32 blocks first is as fast but only as accurate as NumPy, in distribution: it loses to
 *     NumPy on some arrays.)  Along columns, float32 and float16 add blocks of 8 rows in float32
 *     (NumPy adds every row in float32), the blocks in double, in row order.
 *   - float products multiply in 32 double lanes; along columns, in row order.
 *   - sums start from -0.0, the identity of IEEE addition, so that a sum of -0.0 is -0.0.
 * Scans (gp_scan_run_fn): in-register scans of a vector, the vector's last lane carried on; float32
 * and float16 inputs with a float32 or float16 result scan in float32 lanes, as NumPy does, with
 * the pieces' totals and offsets in double. */
#include "cpu/kernels.h"
#include "cpu/simd.h"

/* The 64-byte vectors pass between inlined helpers only, never through a call: GCC's note that
 * their ABI differs without AVX-512 does not apply. */
#ifdef __clang__
#pragma clang diagnostic ignored "-Wunknown-warning-option"
#endif
#pragma GCC diagnostic ignored "-Wpsabi"

#define GP_INLINE static inline __attribute__((always_inline))
/* Unrolls the next loop fully (GCC and Clang): loops over arrays of vector accumulators must be, or
 * the vectors live in memory instead of registers. */
#define GP_UNROLL(n) _Pragma(GP_UNROLL_TEXT(n))
#define GP_UNROLL_TEXT(n) GP_UNROLL_STRING(GCC unroll n)
#define GP_UNROLL_STRING(text) #text
#define GP_IS_HALF(kind, size) ((kind) == 'f' && (size) == 2)

typedef uint16_t gp_u16x32 __attribute__((vector_size(64)));
typedef int16_t gp_i16x32 __attribute__((vector_size(64)));

/* ---- widening ------------------------------------------------------------------------------------ */

/* 8 lanes widened to doubles or 64-bit words.  An instruction set's file may bring its own
 * (GP_ISA_WIDEN): GCC 12 compiles __builtin_convertvector's widenings to 512-bit vectors as 128-bit
 * pieces, four instructions where AVX-512 has one.  Every form gives the same bits. */
#ifndef GP_ISA_WIDEN
GP_INLINE gp_f64x8 gp_widen_f32(gp_f32x8 v) { return __builtin_convertvector(v, gp_f64x8); }
GP_INLINE gp_f64x8 gp_widen_i32_f64(gp_i32x8 v) { return __builtin_convertvector(v, gp_f64x8); }
GP_INLINE gp_u64x8 gp_widen_i32(gp_i32x8 v) { return __builtin_convertvector(v, gp_u64x8); }
GP_INLINE gp_u64x8 gp_widen_u32(gp_u32x8 v) { return __builtin_convertvector(v, gp_u64x8); }
GP_INLINE gp_u64x8 gp_widen_i16(gp_i16x8 v) { return __builtin_convertvector(v, gp_u64x8); }
GP_INLINE gp_u64x8 gp_widen_u16(gp_u16x8 v) { return __builtin_convertvector(v, gp_u64x8); }
GP_INLINE gp_u64x8 gp_widen_i8(gp_i8x8 v) { return __builtin_convertvector(v, gp_u64x8); }
GP_INLINE gp_u64x8 gp_widen_u8(gp_u8x8 v) { return __builtin_convertvector(v, gp_u64x8); }
#endif

/* ---- float32 and float64 min/max ---------------------------------------------------------------- */

/* v or a, whichever is smaller (larger): a when they are equal or either is a NaN, which is what
 * x86's MINPS/MAXPS do; and NaN flags gathered over vectors.  AVX-512's file brings its own
 * (GP_ISA_FLOAT_MINMAX), with the flags in a mask register: GCC builds these from a compare, a
 * blend and a trip through a general register. */
#ifndef GP_ISA_FLOAT_MINMAX
typedef gp_i32x16 gp_nans32;
typedef gp_i64x8 gp_nans64;
GP_INLINE gp_f32x16 gp_min_f32(gp_f32x16 v, gp_f32x16 a) { return GP_SELECT(gp_i32x16, v < a, v, a); }
GP_INLINE gp_f32x16 gp_max_f32(gp_f32x16 v, gp_f32x16 a) { return GP_SELECT(gp_i32x16, v > a, v, a); }
GP_INLINE gp_f64x8 gp_min_f64(gp_f64x8 v, gp_f64x8 a) { return GP_SELECT(gp_i64x8, v < a, v, a); }
GP_INLINE gp_f64x8 gp_max_f64(gp_f64x8 v, gp_f64x8 a) { return GP_SELECT(gp_i64x8, v > a, v, a); }
GP_INLINE gp_nans32 gp_no_nans32(void) { return (gp_nans32){0}; }
GP_INLINE gp_nans64 gp_no_nans64(void) { return (gp_nans64){0}; }
GP_INLINE gp_nans32 gp_nans_f32(gp_nans32 seen, gp_f32x16 v) { return seen | (gp_i32x16)(v != v); }
GP_INLINE gp_nans64 gp_nans_f64(gp_nans64 seen, gp_f64x8 v) { return seen | (gp_i64x8)(v != v); }
GP_INLINE int gp_any_nans32(gp_nans32 seen)
{
    uint64_t words[8], any = 0;
    memcpy(words, &seen, sizeof words);
    for (int j = 0; j < 8; ++j) any |= words[j];
    return any != 0;
}
GP_INLINE int gp_any_nans64(gp_nans64 seen) { return gp_any_nans32((gp_nans32)seen); }
#endif

/* ---- float16 ------------------------------------------------------------------------------------ */

/* 16 float16 bit patterns as floats (exact): the magnitude's bits shifted into a float's place and
 * scaled by 2^112 give normal and subnormal values; infinities and NaNs get the float exponent. */
GP_INLINE gp_f32x16 half16_to_f32(gp_u16x16 h)
{
    const gp_u32x16 bits = __builtin_convertvector(h, gp_u32x16);
    const gp_u32x16 magnitude = (bits & 0x7fff) << 13;
    const gp_u32x16 scaled = (gp_u32x16)((gp_f32x16)magnitude * 0x1p112f);
    const gp_u32x16 special = magnitude | 0x7f800000u;
    const gp_u32x16 value = GP_SELECT(gp_u32x16, magnitude >= (0x7c00u << 13), special, scaled);
    return (gp_f32x16)(value | ((bits & 0x8000) << 16));
}

GP_INLINE gp_f64x8 half8_to_f64(gp_u16x8 h)
{
    const gp_u16x16 wide = __builtin_shufflevector(h, h, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7);
    const gp_f32x16 f = half16_to_f32(wide);
    return gp_widen_f32(__builtin_shufflevector(f, f, 0, 1, 2, 3, 4, 5, 6, 7));
}

/* 16 floats as float16 bit patterns, rounded to nearest even: normal results by rebiasing the
 * exponent and rounding the dropped 13 bits; subnormal ones by adding 0.5, whose ulp (2^-24) is a
 * float16 subnormal's, so that the FPU rounds; overflow to infinity; NaNs as a quiet NaN. */
GP_INLINE gp_u16x16 f32_to_half16(gp_f32x16 f)
{
    const gp_u32x16 bits = (gp_u32x16)f;
    const gp_u32x16 magnitude = bits & 0x7fffffffu;
    const gp_u32x16 normal = (magnitude - 0x38000000u + 0xfffu + ((magnitude >> 13) & 1)) >> 13;
    const gp_u32x16 subnormal = (gp_u32x16)((gp_f32x16)magnitude + 0.5f) - 0x3f000000u;
    gp_u32x16 half = GP_SELECT(gp_u32x16, magnitude < 0x38800000u, subnormal, normal);
    half = GP_SELECT(gp_u32x16, magnitude >= 0x477ff000u, GP_SPLAT(gp_u32x16, 0x7c00u), half);
    half = GP_SELECT(gp_u32x16, magnitude > 0x7f800000u, GP_SPLAT(gp_u32x16, 0x7e00u), half);
    return __builtin_convertvector(half | ((bits >> 16) & 0x8000u), gp_u16x16);
}

/* float16 bits as integers in the order of their values (sign-magnitude to two's complement); the
 * map is its own inverse.  NaNs sort beyond the infinities: the loops test them apart. */
GP_INLINE gp_i16x32 half_keys(gp_u16x32 h)
{
    const gp_i16x32 s = (gp_i16x32)h;
    return s ^ ((s >> 15) & 0x7fff);
}

GP_INLINE gp_i16x32 half_nan_mask(gp_u16x32 h) { return (gp_i16x32)((h & 0x7fff) > 0x7c00); }

/* ---- pairwise sums of double lanes -------------------------------------------------------------- */

/* A binary counter of partial sums: the k-th push merges the partial sums of the levels set in k,
 * so that pushes 0 .. 2^j - 1 end as one sum over a complete binary tree. */
typedef struct {
    gp_f64x8 level[64];
    uint64_t count;
} cascade;

GP_INLINE void cascade_push(cascade *c, gp_f64x8 v)
{
    int level = 0;
    for (; (c->count >> level) & 1; ++level) v = c->level[level] + v;
    c->level[level] = v;
    ++c->count;
}

GP_INLINE gp_f64x8 cascade_total(const cascade *c)
{
    gp_f64x8 total = GP_SPLAT(gp_f64x8, -0.0);
    for (int level = 0; (c->count >> level) != 0; ++level)
        if ((c->count >> level) & 1) total = c->level[level] + total;
    return total;
}

/* Lane sums and products in a fixed pairwise order. */
GP_INLINE double f64x8_sum(gp_f64x8 v)
{
    v = v + __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3);
    v = v + __builtin_shufflevector(v, v, 2, 3, 0, 1, 2, 3, 0, 1);
    return v[0] + v[1];
}

GP_INLINE double f64x8_product(gp_f64x8 v)
{
    v = v * __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3);
    v = v * __builtin_shufflevector(v, v, 2, 3, 0, 1, 2, 3, 0, 1);
    return v[0] * v[1];
}

GP_INLINE gp_f64x8 f32x16_low(gp_f32x16 v) { return gp_widen_f32(__builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7)); }
GP_INLINE gp_f64x8 f32x16_high(gp_f32x16 v)
{
    return gp_widen_f32(__builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15));
}
GP_INLINE gp_f64x8 f32x16_halves_sum(gp_f32x16 v) { return f32x16_low(v) + f32x16_high(v); }

#define GP_ADD(a, b) ((a) + (b))
#define GP_MULTIPLY(a, b) ((a) * (b))
#define GP_LESS(a, b) ((a) < (b))
#define GP_GREATER(a, b) ((a) > (b))

/* ---- loads, per dtype ---------------------------------------------------------------------------- */

/* load_f64: 8 elements as doubles; load_f32: 16 as floats (float16 and float32 only); load_word: 8
 * as 64-bit integers (integers and bool; C's conversion sign- or zero-extends).  The _part forms
 * read only the first n (0 <= n) of them and give `fill` (an element) for the others. */
#define GP_LOADS(NAME, numpy_name, kind, size, host_type, device_type)                            \
    GP_INLINE gp_f64x8 load_f64_##NAME(const gp_lane_##NAME *p)                                    \
    {                                                                                              \
        if (GP_IS_HALF(kind, size)) return half8_to_f64(GP_LOAD(gp_u16x8, p));                    \
        if (kind == 'f' && size == 4) return gp_widen_f32(GP_LOAD(gp_f32x8, p));                  \
        if (kind == 'i' && size == 4) return gp_widen_i32_f64(GP_LOAD(gp_i32x8, p));              \
        return __builtin_convertvector(GP_LOAD(gp_vec8_##NAME, p), gp_f64x8);                     \
    }                                                                                              \
    GP_INLINE gp_f32x16 load_f32_##NAME(const gp_lane_##NAME *p)                                   \
    {                                                                                              \
        if (GP_IS_HALF(kind, size)) return half16_to_f32(GP_LOAD(gp_u16x16, p));                  \
        return __builtin_convertvector(GP_LOAD(gp_vec16_##NAME, p), gp_f32x16);                   \
    }                                                                                              \
    GP_INLINE gp_u64x8 load_word_##NAME(const gp_lane_##NAME *p)                                   \
    {                                                                                              \
        const int is_signed = kind == 'i';                                                         \
        if (size == 4) return is_signed ? gp_widen_i32(GP_LOAD(gp_i32x8, p)) : gp_widen_u32(GP_LOAD(gp_u32x8, p)); \
        if (size == 2) return is_signed ? gp_widen_i16(GP_LOAD(gp_i16x8, p)) : gp_widen_u16(GP_LOAD(gp_u16x8, p)); \
        if (size == 1) return is_signed ? gp_widen_i8(GP_LOAD(gp_i8x8, p)) : gp_widen_u8(GP_LOAD(gp_u8x8, p)); \
        return __builtin_convertvector(GP_LOAD(gp_vec8_##NAME, p), gp_u64x8);                     \
    }                                                                                              \
    GP_INLINE gp_f64x8 load_f64_part_##NAME(const gp_lane_##NAME *p, int64_t n, gp_lane_##NAME fill) \
    {                                                                                              \
        if (n >= 8) return load_f64_##NAME(p);                                                     \
        gp_lane_##NAME lanes[8];                                                                   \
        GP_UNROLL(8)                                                                               \
        for (int j = 0; j < 8; ++j) lanes[j] = j < n ? p[j] : fill;                                \
        return load_f64_##NAME(lanes);                                                             \
    }                                                                                              \
    GP_INLINE gp_f32x16 load_f32_part_##NAME(const gp_lane_##NAME *p, int64_t n, gp_lane_##NAME fill) \
    {                                                                                              \
        if (n >= 16) return load_f32_##NAME(p);                                                    \
        gp_lane_##NAME lanes[16];                                                                  \
        GP_UNROLL(16)                                                                              \
        for (int j = 0; j < 16; ++j) lanes[j] = j < n ? p[j] : fill;                               \
        return load_f32_##NAME(lanes);                                                             \
    }                                                                                              \
    GP_INLINE gp_u64x8 load_word_part_##NAME(const gp_lane_##NAME *p, int64_t n, gp_lane_##NAME fill) \
    {                                                                                              \
        if (n >= 8) return load_word_##NAME(p);                                                    \
        gp_lane_##NAME lanes[8];                                                                   \
        GP_UNROLL(8)                                                                               \
        for (int j = 0; j < 8; ++j) lanes[j] = j < n ? p[j] : fill;                                \
        return load_word_##NAME(lanes);                                                            \
    }                                                                                              \
    GP_INLINE gp_vec_##NAME load_vec_part_##NAME(const gp_lane_##NAME *p, int64_t n, gp_lane_##NAME fill) \
    {                                                                                              \
        enum { L = GP_VEC_BYTES / size };                                                          \
        if (n >= L) return GP_LOAD(gp_vec_##NAME, p);                                              \
        gp_vec_##NAME v = GP_SPLAT(gp_vec_##NAME, fill);                                           \
        memcpy(&v, p, (size_t)n * size);                                                           \
        return v;                                                                                  \
    }                                                                                              \
    /* The identity of a float sum (-0.0) and of products (1) as an element. */                   \
    GP_INLINE gp_lane_##NAME zero_lane_##NAME(void)                                                \
    {                                                                                              \
        if (GP_IS_HALF(kind, size)) return (gp_lane_##NAME)0x8000;                                 \
        return (gp_lane_##NAME)(kind == 'f' ? -0.0 : 0.0);                                         \
    }                                                                                              \
    GP_INLINE gp_lane_##NAME one_lane_##NAME(void)                                                 \
    {                                                                                              \
        if (GP_IS_HALF(kind, size)) return (gp_lane_##NAME)0x3c00;                                 \
        return (gp_lane_##NAME)1;                                                                  \
    }
GP_DTYPES(GP_LOADS)
#undef GP_LOADS

/* ---- min and max --------------------------------------------------------------------------------- */

/* Per dtype: ord_NAME, the vectors compared (float16: keys), and its lanes' NaN masks. */
#define GP_ORDER(NAME, numpy_name, kind, size, host_type, device_type)                            \
    typedef __typeof__(_Generic((host_type){0}, gp_half: (gp_i16x32){0}, default: (gp_vec_##NAME){0})) ord_##NAME; \
    GP_INLINE ord_##NAME to_order_##NAME(gp_vec_##NAME v)                                          \
    {                                                                                              \
        if (GP_IS_HALF(kind, size)) return (ord_##NAME)half_keys((gp_u16x32)v);                    \
        return (ord_##NAME)v;                                                                      \
    }                                                                                              \
    GP_INLINE gp_vec_##NAME from_order_##NAME(ord_##NAME v)                                        \
    {                                                                                              \
        if (GP_IS_HALF(kind, size)) return (gp_vec_##NAME)half_keys((gp_u16x32)v);                 \
        return (gp_vec_##NAME)v;                                                                   \
    }                                                                                              \
    GP_INLINE gp_mvec_##NAME nan_mask_##NAME(gp_vec_##NAME v)                                      \
    {                                                                                              \
        if (GP_IS_HALF(kind, size)) return (gp_mvec_##NAME)half_nan_mask((gp_u16x32)v);            \
        return (gp_mvec_##NAME)(v != v);                                                           \
    }                                                                                              \
    GP_INLINE int is_nan_##NAME(gp_lane_##NAME x)                                                  \
    {                                                                                              \
        gp_bits_##NAME bits;                                                                       \
        memcpy(&bits, &x, size);                                                                   \
        if (GP_IS_HALF(kind, size)) return (bits & 0x7fff) > 0x7c00;                               \
        return __builtin_isnan((double)x);                                                         \
    }
GP_DTYPES(GP_ORDER)
#undef GP_ORDER

GP_INLINE int any_lane_set(const void *mask)
{
    uint64_t words[GP_VEC_BYTES / 8];
    memcpy(words, mask, sizeof words);
    uint64_t any = 0;
    for (int j = 0; j < GP_VEC_BYTES / 8; ++j) any |= words[j];
    return any != 0;
}

/* The min (BETTER = GP_LESS) or max (GP_GREATER) of count contiguous elements: four accumulators of
 * whole vectors, the tail padded with the first element.  The selections pass NaNs by; flags of
 * NaN lanes are kept beside them, and when one is set the piece's first NaN is the result.
 * float32 and float64 go through gp_min_f32 ... (the same selections, an instruction each where
 * the instruction set has one). */
#define GP_MINMAX_RUN(NAME, kind, size, OP, BETTER)                                                \
    static void minmax_run_##OP##_##NAME(const void *in, int64_t count, gp_partial *partial)       \
    {                                                                                              \
        enum { L = GP_VEC_BYTES / size, F32 = kind == 'f' && size == 4, F64 = kind == 'f' && size == 8 }; \
        const gp_lane_##NAME *x = in;                                                              \
        const ord_##NAME first = to_order_##NAME(GP_SPLAT(gp_vec_##NAME, x[0]));                   \
        ord_##NAME acc[4] = {first, first, first, first};                                          \
        gp_mvec_##NAME nan = {0};                                                                  \
        gp_nans32 nans32[4] = {gp_no_nans32(), gp_no_nans32(), gp_no_nans32(), gp_no_nans32()};    \
        gp_nans64 nans64[4] = {gp_no_nans64(), gp_no_nans64(), gp_no_nans64(), gp_no_nans64()};    \
        int64_t k = 0;                                                                             \
        for (; k + 4 * L <= count; k += 4 * L)                                                     \
            GP_UNROLL(4)                                                                           \
            for (int u = 0; u < 4; ++u) {                                                          \
                const gp_vec_##NAME v = GP_LOAD(gp_vec_##NAME, x + k + u * L);                      \
                if (F32) {                                                                         \
                    acc[u] = (ord_##NAME)gp_##OP##_f32((gp_f32x16)v, (gp_f32x16)acc[u]);           \
                    nans32[u] = gp_nans_f32(nans32[u], (gp_f32x16)v);                              \
                } else if (F64) {                                                                  \
                    acc[u] = (ord_##NAME)gp_##OP##_f64((gp_f64x8)v, (gp_f64x8)acc[u]);             \
                    nans64[u] = gp_nans_f64(nans64[u], (gp_f64x8)v);                               \
                } else {                                                                           \
                    const ord_##NAME o = to_order_##NAME(v);                                       \
                    nan |= nan_mask_##NAME(v);                                                     \
                    acc[u] = GP_SELECT(gp_mvec_##NAME, BETTER(o, acc[u]), o, acc[u]);              \
                }                                                                                  \
            }                                                                                      \
        for (; k < count; k += L) {                                                                \
            const gp_vec_##NAME v = load_vec_part_##NAME(x + k, count - k, x[0]);                  \
            const ord_##NAME o = to_order_##NAME(v);                                               \
            nan |= nan_mask_##NAME(v);                                                             \
            acc[0] = GP_SELECT(gp_mvec_##NAME, BETTER(o, acc[0]), o, acc[0]);                      \
        }                                                                                          \
        int any_nan = any_lane_set(&nan);                                                          \
        GP_UNROLL(4)                                                                               \
        for (int u = 0; u < 4; ++u)                                                                \
            any_nan |= (F32 && gp_any_nans32(nans32[u])) || (F64 && gp_any_nans64(nans64[u]));     \
        if (any_nan) {                                                                             \
            for (k = 0; !is_nan_##NAME(x[k]); ++k) continue;                                       \
            partial->u = 0;                                                                        \
            memcpy(&partial->u, x + k, size);                                                      \
            partial->nan = 1;                                                                      \
            return;                                                                                \
        }                                                                                          \
        GP_UNROLL(4)                                                                               \
        for (int u = 1; u < 4; ++u) acc[0] = GP_SELECT(gp_mvec_##NAME, BETTER(acc[u], acc[0]), acc[u], acc[0]); \
        __typeof__(acc[0][0]) best = acc[0][0];                                                    \
        for (int j = 1; j < L; ++j) best = BETTER(acc[0][j], best) ? acc[0][j] : best;             \
        const gp_vec_##NAME value = from_order_##NAME((ord_##NAME){0} + best);                     \
        partial->u = 0;                                                                            \
        memcpy(&partial->u, &value, size);                                                         \
        partial->nan = 0;                                                                          \
    }

/* ---- sums and products in 64-bit words ------------------------------------------------------------ */

#define GP_WORD_RUN(NAME, kind, size, OP, COMBINE, IDENTITY)                                       \
    static void word_run_##OP##_##NAME(const void *in, int64_t count, gp_partial *partial)        \
    {                                                                                              \
        const gp_lane_##NAME *x = in;                                                              \
        const gp_u64x8 identity = GP_SPLAT(gp_u64x8, IDENTITY);                                    \
        gp_u64x8 acc[4] = {identity, identity, identity, identity};                                \
        int64_t k = 0;                                                                             \
        for (; k + 32 <= count; k += 32)                                                           \
            GP_UNROLL(4)                                                                           \
            for (int u = 0; u < 4; ++u) acc[u] = COMBINE(acc[u], load_word_##NAME(x + k + 8 * u));  \
        for (; k < count; k += 8)                                                                  \
            acc[0] = COMBINE(acc[0], load_word_part_##NAME(x + k, count - k, (gp_lane_##NAME)IDENTITY)); \
        const gp_u64x8 v = COMBINE(COMBINE(acc[0], acc[1]), COMBINE(acc[2], acc[3]));               \
        uint64_t total = v[0];                                                                     \
        for (int j = 1; j < 8; ++j) total = COMBINE(total, v[j]);                                  \
        partial->u = total;                                                                        \
    }

/* ---- float sums and products ---------------------------------------------------------------------- */

/* One block of a float64-lane sum: up to 256 elements, 8 additions per lane. */
#define GP_F64_SUM_BLOCK(NAME)                                                                     \
    GP_INLINE gp_f64x8 f64_sum_block_##NAME(const gp_lane_##NAME *x, int64_t n)                    \
    {                                                                                              \
        const gp_f64x8 zero = GP_SPLAT(gp_f64x8, -0.0);                                            \
        gp_f64x8 a[4] = {zero, zero, zero, zero};                                                  \
        GP_UNROLL(8)                                                                               \
        for (int s = 0; s < 8; ++s)                                                                \
            GP_UNROLL(4)                                                                           \
            for (int u = 0; u < 4; ++u) {                                                          \
                const int64_t at = 32 * s + 8 * u;                                                 \
                if (at < n) a[u] += load_f64_part_##NAME(x + at, n - at, zero_lane_##NAME());      \
            }                                                                                      \
        return (a[0] + a[1]) + (a[2] + a[3]);                                                      \
    }

#define GP_F64_RUN(NAME, kind, size)                                                               \
    GP_F64_SUM_BLOCK(NAME)                                                                         \
    static void f64_run_sum_##NAME(const void *in, int64_t count, gp_partial *partial)            \
    {                                                                                              \
        const gp_lane_##NAME *x = in;                                                              \
        cascade c;                                                                                 \
        c.count = 0;                                                                               \
        int64_t k = 0;                                                                             \
        for (; k + 256 <= count; k += 256) cascade_push(&c, f64_sum_block_##NAME(x + k, 256));    \
        if (k < count) cascade_push(&c, f64_sum_block_##NAME(x + k, count - k));                  \
        partial->f = f64x8_sum(cascade_total(&c));                                                 \
    }                                                                                              \
    static void f64_run_prod_##NAME(const void *in, int64_t count, gp_partial *partial)           \
    {                                                                                              \
        const gp_lane_##NAME *x = in;                                                              \
        const gp_f64x8 one = GP_SPLAT(gp_f64x8, 1.0);                                              \
        gp_f64x8 acc[4] = {one, one, one, one};                                                    \
        int64_t k = 0;                                                                             \
        for (; k + 32 <= count; k += 32)                                                           \
            GP_UNROLL(4)                                                                           \
            for (int u = 0; u < 4; ++u) acc[u] *= load_f64_##NAME(x + k + 8 * u);                  \
        for (; k < count; k += 8) acc[0] *= load_f64_part_##NAME(x + k, count - k, one_lane_##NAME()); \
        partial->f = f64x8_product((acc[0] * acc[1]) * (acc[2] * acc[3]));                         \
    }

#define GP_REDUCE_KERNELS(NAME, numpy_name, kind, size, host_type, device_type)                   \
    GP_MINMAX_RUN(NAME, kind, size, min, GP_LESS)                                                  \
    GP_MINMAX_RUN(NAME, kind, size, max, GP_GREATER)                                               \
    GP_WORD_RUN(NAME, kind, size, sum, GP_ADD, 0)                                                  \
    GP_WORD_RUN(NAME, kind, size, prod, GP_MULTIPLY, 1)                                            \
    GP_F64_RUN(NAME, kind, size)
GP_DTYPES(GP_REDUCE_KERNELS)
#undef GP_REDUCE_KERNELS

/* Stores the first n (up to the vector's) lanes of v at out. */
#define GP_STORE_PART(out, v, n)                                                                   \
    do {                                                                                           \
        const __typeof__(v) stored_ = (v);                                                         \
        const int64_t lanes_ = (int64_t)(sizeof stored_ / sizeof stored_[0]);                      \
        if ((n) >= lanes_) memcpy((out), &stored_, sizeof stored_);                                \
        else memcpy((out), &stored_, (size_t)(n) * sizeof stored_[0]);                             \
    } while (0)

/* ---- reductions along columns ------------------------------------------------------------------- */

/* Rows per pass over the accumulator row: each pass loads and stores it once. */
enum { COLUMN_PASS = 8 };

/* min/max along columns.  Plain selections, which pass NaNs by, plus a NaN mask over each pass:
 * when it is set (rarely), each column's first NaN of the pass, if its accumulator holds none yet,
 * goes in; a NaN in the accumulator then stays, since no comparison with it is true.  float16 keys
 * order NaNs beyond the infinities, so float16 keeps a NaN in its lanes by masks instead. */
#define GP_MINMAX_COLUMNS(NAME, kind, size, OP, BETTER)                                            \
    static void minmax_columns_##OP##_##NAME(const void *in, int64_t rows, int64_t stride, int64_t width, \
                                             void *accumulator, int first)                         \
    {                                                                                              \
        enum { L = GP_VEC_BYTES / size };                                                          \
        const gp_lane_##NAME *x = in;                                                              \
        gp_lane_##NAME *acc = accumulator;                                                         \
        int64_t r = 0;                                                                             \
        if (first) {                                                                               \
            memcpy(acc, x, (size_t)width * size);                                                  \
            r = 1;                                                                                 \
        }                                                                                          \
        for (; r < rows; r += COLUMN_PASS) {                                                       \
            const int64_t pass = rows - r < COLUMN_PASS ? rows - r : COLUMN_PASS;                  \
            gp_mvec_##NAME nan_seen = {0};                                                         \
            for (int64_t j = 0; j < width; j += L) {                                               \
                const int64_t n = width - j;                                                       \
                const gp_vec_##NAME a = load_vec_part_##NAME(acc + j, n, acc[j]);                  \
                ord_##NAME o = to_order_##NAME(a);                                                 \
                gp_mvec_##NAME open = GP_IS_HALF(kind, size) ? ~nan_mask_##NAME(a) : (gp_mvec_##NAME){0}; \
                for (int64_t p = 0; p < pass; ++p) {                                               \
                    const gp_lane_##NAME *row = x + (r + p) * stride + j;                          \
                    const gp_vec_##NAME v = load_vec_part_##NAME(row, n, row[0]);                  \
                    const ord_##NAME vo = to_order_##NAME(v);                                      \
                    if (GP_IS_HALF(kind, size)) {                                                  \
                        const gp_mvec_##NAME take = open & (nan_mask_##NAME(v) | (gp_mvec_##NAME)BETTER(vo, o)); \
                        o = GP_SELECT(gp_mvec_##NAME, take, vo, o);                                \
                        open &= ~nan_mask_##NAME(v);                                               \
                    } else {                                                                       \
                        o = GP_SELECT(gp_mvec_##NAME, BETTER(vo, o), vo, o);                       \
                        nan_seen |= nan_mask_##NAME(v);                                            \
                    }                                                                              \
                }                                                                                  \
                GP_STORE_PART(acc + j, from_order_##NAME(o), n);                                   \
            }                                                                                      \
            if (GP_IS_HALF(kind, size) || !any_lane_set(&nan_seen)) continue;                      \
            for (int64_t j = 0; j < width; ++j)                                                    \
                for (int64_t p = 0; p < pass && !is_nan_##NAME(acc[j]); ++p)                       \
                    if (is_nan_##NAME(x[(r + p) * stride + j])) acc[j] = x[(r + p) * stride + j];  \
        }                                                                                          \
    }

/* Integer sums and products along columns, in 64-bit words. */
#define GP_WORD_COLUMNS(NAME, kind, size, OP, COMBINE, IDENTITY)                                   \
    static void word_columns_##OP##_##NAME(const void *in, int64_t rows, int64_t stride, int64_t width, \
                                           void *accumulator, int first)                           \
    {                                                                                              \
        const gp_lane_##NAME *x = in;                                                              \
        uint64_t *acc = accumulator;                                                               \
        if (first)                                                                                 \
            for (int64_t j = 0; j < width; ++j) acc[j] = IDENTITY;                                 \
        for (int64_t r = 0; r < rows; r += COLUMN_PASS) {                                          \
            const int64_t pass = rows - r < COLUMN_PASS ? rows - r : COLUMN_PASS;                  \
            for (int64_t j = 0; j < width; j += 8) {                                               \
                const int64_t n = width - j;                                                       \
                gp_u64x8 a = load_word_part_UINT64(acc + j, n, IDENTITY);                          \
                for (int64_t p = 0; p < pass; ++p)                                                 \
                    a = COMBINE(a, load_word_part_##NAME(x + (r + p) * stride + j, n, (gp_lane_##NAME)IDENTITY)); \
                GP_STORE_PART(acc + j, a, n);                                                      \
            }                                                                                      \
        }                                                                                          \
    }

/* Float sums and products along columns, in double; float32 and float16 sums with a float32 or
 * float16 result (f32_columns_sum) add each pass's rows in float32 first (COLUMN_PASS - 1
 * roundings, where NumPy adds every row in float32). */
#define GP_FLOAT_COLUMNS(NAME, kind, size)                                                         \
    static void f32_columns_sum_##NAME(const void *in, int64_t rows, int64_t stride, int64_t width,\
                                       void *accumulator, int first)                               \
    {                                                                                              \
        const gp_lane_##NAME *x = in;                                                              \
        double *acc = accumulator;                                                                 \
        if (first)                                                                                 \
            for (int64_t j = 0; j < width; ++j) acc[j] = -0.0;                                     \
        for (int64_t r = 0; r < rows; r += COLUMN_PASS) {                                          \
            const int64_t pass = rows - r < COLUMN_PASS ? rows - r : COLUMN_PASS;                  \
            for (int64_t j = 0; j < width; j += 16) {                                              \
                const int64_t n = width - j;                                                       \
                gp_f32x16 block = load_f32_part_##NAME(x + r * stride + j, n, zero_lane_##NAME()); \
                for (int64_t p = 1; p < pass; ++p)                                                 \
                    block += load_f32_part_##NAME(x + (r + p) * stride + j, n, zero_lane_##NAME());\
                gp_f64x8 lo = load_f64_part_FLOAT64(acc + j, n, -0.0);                             \
                gp_f64x8 hi = load_f64_part_FLOAT64(acc + j + 8, n - 8, -0.0);                     \
                lo += f32x16_low(block);                                                           \
                hi += f32x16_high(block);                                                          \
                GP_STORE_PART(acc + j, lo, n);                                                     \
                if (n > 8) GP_STORE_PART(acc + j + 8, hi, n - 8);                                  \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    static void f64_columns_sum_##NAME(const void *in, int64_t rows, int64_t stride, int64_t width,\
                                       void *accumulator, int first)                               \
    {                                                                                              \
        const gp_lane_##NAME *x = in;                                                              \
        double *acc = accumulator;                                                                 \
        if (first)                                                                                 \
            for (int64_t j = 0; j < width; ++j) acc[j] = -0.0;                                     \
        for (int64_t r = 0; r < rows; r += COLUMN_PASS) {                                          \
            const int64_t pass = rows - r < COLUMN_PASS ? rows - r : COLUMN_PASS;                  \
            for (int64_t j = 0; j < width; j += 8) {                                               \
                const int64_t n = width - j;                                                       \
                gp_f64x8 a = load_f64_part_FLOAT64(acc + j, n, -0.0);                              \
                for (int64_t p = 0; p < pass; ++p)                                                 \
                    a += load_f64_part_##NAME(x + (r + p) * stride + j, n, zero_lane_##NAME());    \
                GP_STORE_PART(acc + j, a, n);                                                      \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    static void f64_columns_prod_##NAME(const void *in, int64_t rows, int64_t stride, int64_t width,\
                                        void *accumulator, int first)                              \
    {                                                                                              \
        const gp_lane_##NAME *x = in;                                                              \
        double *acc = accumulator;                                                                 \
        if (first)                                                                                 \
            for (int64_t j = 0; j < width; ++j) acc[j] = 1.0;                                      \
        for (int64_t r = 0; r < rows; r += COLUMN_PASS) {                                          \
            const int64_t pass = rows - r < COLUMN_PASS ? rows - r : COLUMN_PASS;                  \
            for (int64_t j = 0; j < width; j += 8) {                                               \
                const int64_t n = width - j;                                                       \
                gp_f64x8 a = load_f64_part_FLOAT64(acc + j, n, 1.0);                               \
                for (int64_t p = 0; p < pass; ++p)                                                 \
                    a *= load_f64_part_##NAME(x + (r + p) * stride + j, n, one_lane_##NAME());     \
                GP_STORE_PART(acc + j, a, n);                                                      \
            }                                                                                      \
        }                                                                                          \
    }

#define GP_COLUMN_KERNELS(NAME, numpy_name, kind, size, host_type, device_type)                   \
    GP_MINMAX_COLUMNS(NAME, kind, size, min, GP_LESS)                                              \
    GP_MINMAX_COLUMNS(NAME, kind, size, max, GP_GREATER)                                           \
    GP_WORD_COLUMNS(NAME, kind, size, sum, GP_ADD, 0)                                              \
    GP_WORD_COLUMNS(NAME, kind, size, prod, GP_MULTIPLY, 1)                                        \
    GP_FLOAT_COLUMNS(NAME, kind, size)
GP_DTYPES(GP_COLUMN_KERNELS)
#undef GP_COLUMN_KERNELS

/* ---- scans --------------------------------------------------------------------------------------- */

/* Lanes shifted up by `by` (1, 2, 4 or 8; a constant), the first `by` lanes from z.  AVX-512's file
 * brings its own (GP_ISA_LANE_SHIFTS): VALIGND/VALIGNQ, where GCC builds a two-table permute with
 * register copies. */
#ifndef GP_ISA_LANE_SHIFTS
GP_INLINE gp_f32x16 gp_shift_f32(gp_f32x16 v, gp_f32x16 z, int by)
{
    switch (by) {
    case 1: return __builtin_shufflevector(v, z, 16, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14);
    case 2: return __builtin_shufflevector(v, z, 16, 17, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13);
    case 4: return __builtin_shufflevector(v, z, 16, 17, 18, 19, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
    default: return __builtin_shufflevector(v, z, 16, 17, 18, 19, 20, 21, 22, 23, 0, 1, 2, 3, 4, 5, 6, 7);
    }
}

GP_INLINE gp_u64x8 gp_shift_u64(gp_u64x8 v, gp_u64x8 z, int by)
{
    switch (by) {
    case 1: return __builtin_shufflevector(v, z, 8, 0, 1, 2, 3, 4, 5, 6);
    case 2: return __builtin_shufflevector(v, z, 8, 9, 0, 1, 2, 3, 4, 5);
    default: return __builtin_shufflevector(v, z, 8, 9, 10, 11, 0, 1, 2, 3);
    }
}
#endif

GP_INLINE gp_f64x8 gp_shift_f64(gp_f64x8 v, gp_f64x8 z, int by) { return (gp_f64x8)gp_shift_u64((gp_u64x8)v, (gp_u64x8)z, by); }

/* In-register inclusive scans (Hillis-Steele: log2(lanes) shifted additions; shifted-in lanes hold
 * `zero`, the identity), and each vector's last lane in every lane. */
GP_INLINE gp_f32x16 f32x16_scan(gp_f32x16 v, gp_f32x16 z)
{
    v += gp_shift_f32(v, z, 1);
    v += gp_shift_f32(v, z, 2);
    v += gp_shift_f32(v, z, 4);
    return v + gp_shift_f32(v, z, 8);
}

GP_INLINE gp_f32x16 f32x16_last(gp_f32x16 v)
{
    return __builtin_shufflevector(v, v, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15);
}

#define GP_SCAN8(TYPE, SHIFT)                                                                      \
    GP_INLINE TYPE TYPE##_scan(TYPE v, TYPE z)                                                     \
    {                                                                                              \
        v += SHIFT(v, z, 1);                                                                       \
        v += SHIFT(v, z, 2);                                                                       \
        return v + SHIFT(v, z, 4);                                                                 \
    }                                                                                              \
    GP_INLINE TYPE TYPE##_last(TYPE v) { return __builtin_shufflevector(v, v, 7, 7, 7, 7, 7, 7, 7, 7); }
GP_SCAN8(gp_f64x8, gp_shift_f64)
GP_SCAN8(gp_u64x8, gp_shift_u64)
#undef GP_SCAN8


/* A piece's scan: out = offset + the in-register scans, their last lanes carried on; the piece's
 * total (in double for the float kinds, whatever the lanes) comes out as scan_total computes it.
 * Kinds: word (64-bit words), f64 (double), f32 (float lanes; the output float32, or float16 with
 * half_out).  VEC is the lanes' vector, LOAD/LOAD_PART the loads, TOTAL_ADD adds a vector of input
 * to the total's lanes. */
#define GP_SCAN_KERNELS(NAME, kind, size)                                                          \
    static void word_scan_total_##NAME(const void *in, int64_t count, gp_partial *total)           \
    {                                                                                              \
        const gp_lane_##NAME *x = in;                                                              \
        gp_u64x8 t = {0};                                                                          \
        int64_t k = 0;                                                                             \
        for (; k + 8 <= count; k += 8) t += load_word_##NAME(x + k);                               \
        if (k < count) t += load_word_part_##NAME(x + k, count - k, 0);                            \
        uint64_t sum = 0;                                                                          \
        for (int j = 0; j < 8; ++j) sum += t[j];                                                   \
        total->u = sum;                                                                            \
    }                                                                                              \
    GP_INLINE void word_scan_step_##NAME(gp_u64x8 v, uint64_t *y, int64_t n, const int exclusive,  \
                                         gp_u64x8 *carry, gp_u64x8 *t)                             \
    {                                                                                              \
        const gp_u64x8 zero = {0};                                                                 \
        const gp_u64x8 s = gp_u64x8_scan(v, zero);                                                 \
        GP_STORE_PART(y, (exclusive ? gp_shift_u64(s, zero, 1) : s) + *carry, n);                  \
        *carry += gp_u64x8_last(s);                                                                \
        *t += v;                                                                                   \
    }                                                                                              \
    GP_INLINE void word_scan_body_##NAME(const void *in, int64_t count, void *out, const int exclusive, int half_out, \
                                         const gp_partial *offset, gp_partial *total)              \
    {                                                                                              \
        (void)half_out;                                                                            \
        const gp_lane_##NAME *x = in;                                                              \
        uint64_t *y = out;                                                                         \
        gp_u64x8 carry = GP_SPLAT(gp_u64x8, offset->u), t = {0};                                   \
        int64_t k = 0;                                                                             \
        for (; k + 8 <= count; k += 8) word_scan_step_##NAME(load_word_##NAME(x + k), y + k, 8, exclusive, &carry, &t); \
        if (k < count)                                                                             \
            word_scan_step_##NAME(load_word_part_##NAME(x + k, count - k, 0), y + k, count - k, exclusive, &carry, &t); \
        uint64_t sum = 0;                                                                          \
        for (int j = 0; j < 8; ++j) sum += t[j];                                                   \
        total->u = sum;                                                                            \
    }                                                                                              \
    static void f64_scan_total_##NAME(const void *in, int64_t count, gp_partial *total)            \
    {                                                                                              \
        const gp_lane_##NAME *x = in;                                                              \
        gp_f64x8 t = GP_SPLAT(gp_f64x8, -0.0);                                                     \
        int64_t k = 0;                                                                             \
        for (; k + 8 <= count; k += 8) t += load_f64_##NAME(x + k);                                \
        if (k < count) t += load_f64_part_##NAME(x + k, count - k, zero_lane_##NAME());            \
        total->f = f64x8_sum(t);                                                                   \
    }                                                                                              \
    GP_INLINE void f64_scan_step_##NAME(gp_f64x8 v, double *y, int64_t n, const int exclusive,     \
                                        gp_f64x8 *carry, gp_f64x8 *t)                              \
    {                                                                                              \
        const gp_f64x8 zero = GP_SPLAT(gp_f64x8, -0.0);                                            \
        const gp_f64x8 s = gp_f64x8_scan(v, zero);                                                 \
        GP_STORE_PART(y, (exclusive ? gp_shift_f64(s, zero, 1) : s) + *carry, n);                  \
        *carry += gp_f64x8_last(s);                                                                \
        *t += v;                                                                                   \
    }                                                                                              \
    GP_INLINE void f64_scan_body_##NAME(const void *in, int64_t count, void *out, const int exclusive, int half_out, \
                                        const gp_partial *offset, gp_partial *total)               \
    {                                                                                              \
        (void)half_out;                                                                            \
        const gp_lane_##NAME *x = in;                                                              \
        double *y = out;                                                                           \
        gp_f64x8 carry = GP_SPLAT(gp_f64x8, offset->f), t = GP_SPLAT(gp_f64x8, -0.0);              \
        int64_t k = 0;                                                                             \
        for (; k + 8 <= count; k += 8) f64_scan_step_##NAME(load_f64_##NAME(x + k), y + k, 8, exclusive, &carry, &t); \
        if (k < count)                                                                             \
            f64_scan_step_##NAME(load_f64_part_##NAME(x + k, count - k, zero_lane_##NAME()), y + k, count - k, \
                                 exclusive, &carry, &t);                                           \
        total->f = f64x8_sum(t);                                                                   \
    }                                                                                              \
    static void f32_scan_total_##NAME(const void *in, int64_t count, gp_partial *total)            \
    {                                                                                              \
        const gp_lane_##NAME *x = in;                                                              \
        gp_f64x8 t = GP_SPLAT(gp_f64x8, -0.0);                                                     \
        int64_t k = 0;                                                                             \
        for (; k + 16 <= count; k += 16) t += f32x16_halves_sum(load_f32_##NAME(x + k));           \
        if (k < count) t += f32x16_halves_sum(load_f32_part_##NAME(x + k, count - k, zero_lane_##NAME())); \
        total->f = f64x8_sum(t);                                                                   \
    }                                                                                              \
    GP_INLINE void f32_scan_step_##NAME(gp_f32x16 v, void *out, int64_t n, const int exclusive, int half_out, \
                                        gp_f32x16 *carry, gp_f64x8 *t)                             \
    {                                                                                              \
        const gp_f32x16 zero = GP_SPLAT(gp_f32x16, -0.0f);                                         \
        const gp_f32x16 s = f32x16_scan(v, zero);                                                  \
        const gp_f32x16 r = (exclusive ? gp_shift_f32(s, zero, 1) : s) + *carry;                   \
        if (half_out) GP_STORE_PART((uint16_t *)out, f32_to_half16(r), n);                         \
        else GP_STORE_PART((float *)out, r, n);                                                    \
        *carry += f32x16_last(s);                                                                  \
        *t += f32x16_halves_sum(v);                                                                \
    }                                                                                              \
    GP_INLINE void f32_scan_body_##NAME(const void *in, int64_t count, void *out, const int exclusive, int half_out, \
                                        const gp_partial *offset, gp_partial *total)               \
    {                                                                                              \
        const gp_lane_##NAME *x = in;                                                              \
        const int64_t out_size = half_out ? 2 : 4;                                                 \
        gp_f32x16 carry = GP_SPLAT(gp_f32x16, (float)offset->f);                                   \
        gp_f64x8 t = GP_SPLAT(gp_f64x8, -0.0);                                                     \
        int64_t k = 0;                                                                             \
        for (; k + 16 <= count; k += 16)                                                           \
            f32_scan_step_##NAME(load_f32_##NAME(x + k), (char *)out + k * out_size, 16, exclusive, half_out, &carry, &t); \
        if (k < count)                                                                             \
            f32_scan_step_##NAME(load_f32_part_##NAME(x + k, count - k, zero_lane_##NAME()), (char *)out + k * out_size, \
                                 count - k, exclusive, half_out, &carry, &t);                      \
        total->f = f64x8_sum(t);                                                                   \
    }

/* Scans along columns: acc (width slots of the kind's type) carries each column's running sum from
 * row to row; `first` sets it to the identity (+0 for an exclusive scan, -0.0 for an inclusive
 * one, so that a scan of -0.0 is -0.0). */
#define GP_SCAN_COLUMN_KERNELS(NAME, kind, size)                                                   \
    static void word_scan_columns_##NAME(const void *in, int64_t rows, int64_t stride, void *out, int64_t width, \
                                         void *accumulator, int first, int exclusive, int half_out) \
    {                                                                                              \
        (void)half_out;                                                                            \
        const gp_lane_##NAME *x = in;                                                              \
        uint64_t *y = out, *acc = accumulator;                                                     \
        if (first)                                                                                 \
            for (int64_t j = 0; j < width; ++j) acc[j] = 0;                                        \
        for (int64_t r = 0; r < rows; ++r)                                                         \
            for (int64_t j = 0; j < width; j += 8) {                                               \
                const int64_t n = width - j;                                                       \
                const gp_u64x8 a = load_word_part_UINT64(acc + j, n, 0);                           \
                const gp_u64x8 b = a + load_word_part_##NAME(x + r * stride + j, n, 0);            \
                GP_STORE_PART(acc + j, b, n);                                                      \
                GP_STORE_PART(y + r * stride + j, exclusive ? a : b, n);                           \
            }                                                                                      \
    }                                                                                              \
    static void f64_scan_columns_##NAME(const void *in, int64_t rows, int64_t stride, void *out, int64_t width, \
                                        void *accumulator, int first, int exclusive, int half_out) \
    {                                                                                              \
        (void)half_out;                                                                            \
        const gp_lane_##NAME *x = in;                                                              \
        double *y = out, *acc = accumulator;                                                       \
        if (first)                                                                                 \
            for (int64_t j = 0; j < width; ++j) acc[j] = exclusive ? 0.0 : -0.0;                   \
        for (int64_t r = 0; r < rows; ++r)                                                         \
            for (int64_t j = 0; j < width; j += 8) {                                               \
                const int64_t n = width - j;                                                       \
                const gp_f64x8 a = load_f64_part_FLOAT64(acc + j, n, 0.0);                         \
                const gp_f64x8 b = a + load_f64_part_##NAME(x + r * stride + j, n, zero_lane_##NAME()); \
                GP_STORE_PART(acc + j, b, n);                                                      \
                GP_STORE_PART(y + r * stride + j, exclusive ? a : b, n);                           \
            }                                                                                      \
    }                                                                                              \
    static void f32_scan_columns_##NAME(const void *in, int64_t rows, int64_t stride, void *out, int64_t width, \
                                        void *accumulator, int first, int exclusive, int half_out) \
    {                                                                                              \
        const gp_lane_##NAME *x = in;                                                              \
        float *acc = accumulator;                                                                  \
        if (first)                                                                                 \
            for (int64_t j = 0; j < width; ++j) acc[j] = exclusive ? 0.0f : -0.0f;                 \
        for (int64_t r = 0; r < rows; ++r)                                                         \
            for (int64_t j = 0; j < width; j += 16) {                                              \
                const int64_t n = width - j;                                                       \
                const gp_f32x16 a = load_f32_part_FLOAT32(acc + j, n, 0.0f);                       \
                const gp_f32x16 b = a + load_f32_part_##NAME(x + r * stride + j, n, zero_lane_##NAME()); \
                const gp_f32x16 result = exclusive ? a : b;                                        \
                GP_STORE_PART(acc + j, b, n);                                                      \
                if (half_out) {                                                                    \
                    const gp_u16x16 h = f32_to_half16(result);                                     \
                    GP_STORE_PART((uint16_t *)out + r * stride + j, h, n);                         \
                } else {                                                                           \
                    GP_STORE_PART((float *)out + r * stride + j, result, n);                       \
                }                                                                                  \
            }                                                                                      \
    }

/* The entries: the bodies above with `exclusive` a constant, so that its test leaves the loop. */
#define GP_SCAN_RUN(NAME, PREFIX)                                                                  \
    static void PREFIX##_scan_run_##NAME(const void *in, int64_t count, void *out, int exclusive, int half_out, \
                                         const gp_partial *offset, gp_partial *total)              \
    {                                                                                              \
        if (exclusive) PREFIX##_scan_body_##NAME(in, count, out, 1, half_out, offset, total);      \
        else PREFIX##_scan_body_##NAME(in, count, out, 0, half_out, offset, total);                \
    }

#define GP_ALL_SCAN_KERNELS(NAME, numpy_name, kind, size, host_type, device_type)                 \
    GP_SCAN_KERNELS(NAME, kind, size)                                                              \
    GP_SCAN_RUN(NAME, word)                                                                        \
    GP_SCAN_RUN(NAME, f64)                                                                         \
    GP_SCAN_RUN(NAME, f32)                                                                         \
    GP_SCAN_COLUMN_KERNELS(NAME, kind, size)
GP_DTYPES(GP_ALL_SCAN_KERNELS)
#undef GP_ALL_SCAN_KERNELS

/* ---- correlation --------------------------------------------------------------------------------- */

/* Per dtype, the lanes correlation computes in: floats in their own type (float16 is computed as
 * float32 by the driver), integers in the unsigned type of their size (wrapping, as NumPy's and
 * SciPy's integer sums do in the output's width), bool as bytes (the OR of ANDs). */
#define GP_CORRELATE_KERNELS(NAME, numpy_name, kind, size, host_type, device_type)                \
    typedef __typeof__(_Generic((host_type){0}, float: (float)0, double: (double)0,                \
                                default: (gp_bits_##NAME)0)) corr_lane_##NAME;                     \
    typedef corr_lane_##NAME corr_vec_##NAME __attribute__((vector_size(GP_VEC_BYTES)));           \
    GP_INLINE corr_vec_##NAME corr_load_##NAME(const corr_lane_##NAME *p, int64_t n)               \
    {                                                                                              \
        enum { L = GP_VEC_BYTES / size };                                                          \
        if (n >= L) return GP_LOAD(corr_vec_##NAME, p);                                            \
        corr_vec_##NAME v = {0};                                                                   \
        memcpy(&v, p, (size_t)n * size);                                                           \
        return v;                                                                                  \
    }                                                                                              \
    GP_INLINE corr_vec_##NAME corr_tap_##NAME(corr_vec_##NAME acc, corr_lane_##NAME w, corr_vec_##NAME x) \
    {                                                                                              \
        if (kind == 'b') /* (through the bits, so that this compiles for floats too) */           \
            return (corr_vec_##NAME)((gp_bvec_##NAME)acc |                                         \
                                     ((gp_bvec_##NAME)GP_SPLAT(corr_vec_##NAME, w) & (gp_bvec_##NAME)x)); \
        return acc + GP_SPLAT(corr_vec_##NAME, w) * x;                                             \
    }                                                                                              \
    /* out[j] for j < width, U vectors of them at a time; mask_cols == TAPS when TAPS > 0. */      \
    GP_INLINE void corr_rows_##NAME(corr_lane_##NAME *out, int64_t width, const corr_lane_##NAME *const *rows, \
                                    const corr_lane_##NAME *mask, int64_t mask_rows, int64_t mask_cols, \
                                    const int taps)                                                \
    {                                                                                              \
        enum { L = GP_VEC_BYTES / size, U = 4 };                                                   \
        const int64_t q_count = taps > 0 ? taps : mask_cols;                                       \
        int64_t j = 0;                                                                             \
        for (; j + U * L <= width; j += U * L) {                                                   \
            corr_vec_##NAME acc[U] = {{0}};                                                        \
            for (int64_t p = 0; p < mask_rows; ++p) {                                              \
                const corr_lane_##NAME *x = rows[p] + j, *w = mask + p * mask_cols;                \
                GP_UNROLL(8)                                                                       \
                for (int64_t q = 0; q < q_count; ++q)                                              \
                    GP_UNROLL(4)                                                                   \
                    for (int u = 0; u < U; ++u)                                                    \
                        acc[u] = corr_tap_##NAME(acc[u], w[q], GP_LOAD(corr_vec_##NAME, x + q + u * L)); \
            }                                                                                      \
            GP_UNROLL(4)                                                                           \
            for (int u = 0; u < U; ++u) GP_STORE(out + j + u * L, acc[u]);                         \
        }                                                                                          \
        for (; j < width; j += L) {                                                                \
            const int64_t n = width - j;                                                           \
            corr_vec_##NAME acc = {0};                                                             \
            for (int64_t p = 0; p < mask_rows; ++p) {                                              \
                const corr_lane_##NAME *x = rows[p] + j, *w = mask + p * mask_cols;                \
                for (int64_t q = 0; q < q_count; ++q) acc = corr_tap_##NAME(acc, w[q], corr_load_##NAME(x + q, n)); \
            }                                                                                      \
            GP_STORE_PART(out + j, acc, n);                                                        \
        }                                                                                          \
    }                                                                                              \
    static void correlate_rows_##NAME(void *out, int64_t width, const void *const *rows, const void *mask, \
                                      int64_t mask_rows, int64_t mask_cols)                        \
    {                                                                                              \
        const corr_lane_##NAME *const *r = (const corr_lane_##NAME *const *)rows;                  \
        switch (mask_cols) { /* taps unrolled for the common lengths */                            \
        case 3: corr_rows_##NAME(out, width, r, mask, mask_rows, 3, 3); break;                     \
        case 5: corr_rows_##NAME(out, width, r, mask, mask_rows, 5, 5); break;                     \
        case 7: corr_rows_##NAME(out, width, r, mask, mask_rows, 7, 7); break;                     \
        default: corr_rows_##NAME(out, width, r, mask, mask_rows, mask_cols, 0); break;            \
        }                                                                                          \
    }
GP_DTYPES(GP_CORRELATE_KERNELS)
#undef GP_CORRELATE_KERNELS

/* ---- transposes ---------------------------------------------------------------------------------- */

/* out[p * dst_p + q] = in[p + q * src_q] for p < extent_p, q < extent_q, elements of BYTES bytes:
 * macro tiles of 64 x 64 elements (their source and destination rows stay in cache and in the TLB),
 * made of 8 x 8 tiles transposed in registers: 8 source rows of 8 elements, three rounds of
 * interleaving, 8 destination rows.  Round r interleaves rows 2^r apart by groups of 2^r elements;
 * it leaves source column c in register bitreverse(c). */
#define GP_TRANSPOSE_KERNEL(BYTES)                                                                 \
    typedef GP_UINT_OF_SIZE(BYTES) tr_lane_##BYTES;                                                \
    typedef tr_lane_##BYTES tr_vec_##BYTES __attribute__((vector_size(8 * BYTES)));                \
    GP_INLINE void transpose8_##BYTES(const tr_lane_##BYTES *in, int64_t src_q, tr_lane_##BYTES *out, int64_t dst_p) \
    {                                                                                              \
        tr_vec_##BYTES r[8], s[8];                                                                 \
        GP_UNROLL(8)                                                                               \
        for (int q = 0; q < 8; ++q) r[q] = GP_LOAD(tr_vec_##BYTES, in + q * src_q);                \
        GP_UNROLL(8)                                                                               \
        for (int i = 0; i < 8; i += 2) {                                                           \
            s[i] = __builtin_shufflevector(r[i], r[i + 1], 0, 8, 1, 9, 2, 10, 3, 11);              \
            s[i + 1] = __builtin_shufflevector(r[i], r[i + 1], 4, 12, 5, 13, 6, 14, 7, 15);         \
        }                                                                                          \
        static const int round2[4] = {0, 1, 4, 5};                                                 \
        GP_UNROLL(4)                                                                               \
        for (int k = 0; k < 4; ++k) {                                                              \
            const int i = round2[k];                                                               \
            r[i] = __builtin_shufflevector(s[i], s[i + 2], 0, 1, 8, 9, 2, 3, 10, 11);              \
            r[i + 2] = __builtin_shufflevector(s[i], s[i + 2], 4, 5, 12, 13, 6, 7, 14, 15);         \
        }                                                                                          \
        GP_UNROLL(4)                                                                               \
        for (int i = 0; i < 4; ++i) {                                                              \
            s[i] = __builtin_shufflevector(r[i], r[i + 4], 0, 1, 2, 3, 8, 9, 10, 11);              \
            s[i + 4] = __builtin_shufflevector(r[i], r[i + 4], 4, 5, 6, 7, 12, 13, 14, 15);         \
        }                                                                                          \
        static const int bitreverse[8] = {0, 4, 2, 6, 1, 5, 3, 7};                                 \
        GP_UNROLL(8)                                                                               \
        for (int p = 0; p < 8; ++p) GP_STORE(out + p * dst_p, s[bitreverse[p]]);                   \
    }                                                                                              \
    static void transpose_##BYTES(const void *source, void *target, int64_t extent_p, int64_t extent_q, \
                                  int64_t src_q, int64_t dst_p)                                    \
    {                                                                                              \
        const tr_lane_##BYTES *in = source;                                                        \
        tr_lane_##BYTES *out = target;                                                             \
        for (int64_t q0 = 0; q0 < extent_q; q0 += 64)                                              \
            for (int64_t p0 = 0; p0 < extent_p; p0 += 64) {                                        \
                const int64_t q1 = extent_q - q0 < 64 ? extent_q : q0 + 64;                        \
                const int64_t p1 = extent_p - p0 < 64 ? extent_p : p0 + 64;                        \
                int64_t q = q0;                                                                    \
                for (; q + 8 <= q1; q += 8) {                                                      \
                    int64_t p = p0;                                                                \
                    for (; p + 8 <= p1; p += 8) transpose8_##BYTES(in + p + q * src_q, src_q, out + p * dst_p + q, dst_p); \
                    for (; p < p1; ++p)                                                            \
                        for (int64_t k = q; k < q + 8; ++k) out[p * dst_p + k] = in[p + k * src_q]; \
                }                                                                                  \
                for (; q < q1; ++q)                                                                \
                    for (int64_t p = p0; p < p1; ++p) out[p * dst_p + q] = in[p + q * src_q];      \
            }                                                                                      \
    }
GP_TRANSPOSE_KERNEL(1)
GP_TRANSPOSE_KERNEL(2)
GP_TRANSPOSE_KERNEL(4)
GP_TRANSPOSE_KERNEL(8)
#undef GP_TRANSPOSE_KERNEL

/* ---- the table ------------------------------------------------------------------------------------ */

#define GP_REDUCE_ENTRY(NAME, OP, ACC, PREFIX, OPNAME)                                             \
    t.reduce_run[OP][ACC][GP_##NAME] = PREFIX##_run_##OPNAME##_##NAME;                             \
    t.reduce_columns[OP][ACC][GP_##NAME] = PREFIX##_columns_##OPNAME##_##NAME;

/* Entries exist where the accumulator rules (gp_reduce_acc, gp_scan_acc) can ask for them. */
#define GP_REDUCE_ENTRIES(NAME, numpy_name, kind, size, host_type, device_type)                   \
    GP_REDUCE_ENTRY(NAME, GP_MIN, GP_ACC_SAME, minmax, min)                                        \
    GP_REDUCE_ENTRY(NAME, GP_MAX, GP_ACC_SAME, minmax, max)                                        \
    if (kind != 'f') {                                                                             \
        GP_REDUCE_ENTRY(NAME, GP_SUM, GP_ACC_WORD, word, sum)                                      \
        GP_REDUCE_ENTRY(NAME, GP_PROD, GP_ACC_WORD, word, prod)                                    \
    }                                                                                              \
    GP_REDUCE_ENTRY(NAME, GP_SUM, GP_ACC_F64, f64, sum)                                            \
    GP_REDUCE_ENTRY(NAME, GP_PROD, GP_ACC_F64, f64, prod)                                          \
    if (kind == 'f' && size <= 4) {                                                                \
        t.reduce_run[GP_SUM][GP_ACC_F32][GP_##NAME] = f64_run_sum_##NAME;                          \
        t.reduce_columns[GP_SUM][GP_ACC_F32][GP_##NAME] = f32_columns_sum_##NAME;                  \
    }

#define GP_SCAN_ENTRY(NAME, ACC, PREFIX)                                                           \
    t.scan_total[ACC][GP_##NAME] = PREFIX##_scan_total_##NAME;                                     \
    t.scan_run[ACC][GP_##NAME] = PREFIX##_scan_run_##NAME;                                         \
    t.scan_columns[ACC][GP_##NAME] = PREFIX##_scan_columns_##NAME;
#define GP_SCAN_ENTRIES(NAME, numpy_name, kind, size, host_type, device_type)                     \
    if (kind != 'f') {                                                                             \
        GP_SCAN_ENTRY(NAME, GP_ACC_WORD, word)                                                     \
    }                                                                                              \
    GP_SCAN_ENTRY(NAME, GP_ACC_F64, f64)                                                           \
    if (kind == 'f' && size <= 4) {                                                                \
        GP_SCAN_ENTRY(NAME, GP_ACC_F32, f32)                                                       \
    }

#define GP_CORRELATE_ENTRIES(NAME, numpy_name, kind, size, host_type, device_type)               \
    t.correlate[GP_##NAME] = correlate_rows_##NAME;

static void fill_table(gp_cpu_kernels *table)
{
    gp_cpu_kernels t;
    memset(&t, 0, sizeof t);
    t.name = GP_ISA_NAME;
    GP_DTYPES(GP_REDUCE_ENTRIES)
    GP_DTYPES(GP_SCAN_ENTRIES)
    GP_DTYPES(GP_CORRELATE_ENTRIES)
    t.correlate[GP_FLOAT16] = correlate_rows_FLOAT32; /* the driver converts float16 to float32 */
    t.transpose[0] = transpose_1;
    t.transpose[1] = transpose_2;
    t.transpose[2] = transpose_4;
    t.transpose[3] = transpose_8;
    *table = t;
}
#undef GP_REDUCE_ENTRIES
#undef GP_SCAN_ENTRIES
#undef GP_CORRELATE_ENTRIES
#undef GP_SCAN_ENTRY
