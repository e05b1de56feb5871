/* The CPU backend's typed loops (see kernels.h), written once with the native vectors of simd.h
 * and generated per dtype from the dtype table.  Included by isa_*.c, each of which compiles it for
 * one instruction set (isa_begin.h): it ends with that set's table's fill function (GP_ISA_FILL)
 * and the end of the set's target region.
 *
 * Every loop fixes its order of operations by element index alone (never by address, thread or
 * instruction set), on 64-byte logical vectors (simd.h), so that a result is the same bits on every
 * path.  Floating-point contraction is off (isa_*.c), so a * b + c is two roundings everywhere.
 *
 * Reductions (gp_reduce_run_fn, gp_reduce_columns_fn):
 *   - min/max keep the input's type; float16 is compared through integer keys of its bits.  NaN
 *     wins: the contiguous loop keeps NaN flags beside the lanes and, when one is set, returns the
 *     first NaN of its piece; the column loop lets a NaN into its accumulator, and no comparison
 *     lets it out.
 *   - integer sums and products run in 64-bit lanes (uint64_t wraps as NumPy's int64 does).
 *   - float sums of every float dtype run in double: blocks of 256 elements in 32 double lanes (8
 *     additions per lane), then the blocks pairwise (a binary counter of partial sums: the pairwise
 *     tree of the blocks).  A float32 or float16 result is then the correctly rounded sum but for
 *     near-ties, never further from the exact sum than NumPy's float32 pairwise sum.  (Summing in
 *     float32 blocks first is as fast but only as accurate as NumPy, in distribution: it loses to
 *     NumPy on some arrays.)  Along columns, float32 and float16 add blocks of 8 rows in float32
 *     (NumPy adds every row in float32), the blocks in double, in row order.
 *   - float products multiply in 32 double lanes; along columns in row order, float16 blocks of 8
 *     rows in float32 first (NumPy multiplies every row in float32), then in double.
 *   - sums start from -0.0, the identity of IEEE addition, so that a scan of -0.0 is -0.0 (a
 *     reduction's result then gets NumPy's +0.0 start in reduce.c); nan-scans read NaN as +0.0.
 * Scans (gp_scan_run_fn): in-register scans of a logical vector, its last lane carried on; float32
 * and float16 inputs with a float32 or float16 result scan in float32 lanes, as NumPy does, with
 * the pieces' totals and offsets in double, but for products with a float32 result, in double lanes
 * (gp_scan_acc). */
#include "cpu/fp_status.h"
#include "cpu/kernels.h"
#include "cpu/simd.h" /* (isa_begin.h included it, in the target region) */

/* Vectors pass between inlined helpers only, never through a call: GCC's and Clang's notes that
 * their ABI would differ between instruction sets do not apply. */
#ifdef __clang__
#pragma clang diagnostic ignored "-Wunknown-warning-option"
#endif
#pragma GCC diagnostic ignored "-Wpsabi"

#define GP_INLINE static inline __attribute__((always_inline))
/* Unrolls the next loop fully (GCC and Clang): loops over arrays of vector accumulators must be, or
 * the vectors live in memory instead of registers.  16 covers every count used (4 * GP_PARTS). */
#define GP_UNROLL(n) _Pragma(GP_UNROLL_TEXT(n))
#define GP_UNROLL_TEXT(n) GP_UNROLL_STRING(GCC unroll n)
#define GP_UNROLL_STRING(text) #text
#define GP_IS_HALF(kind, size) ((kind) == 'f' && (size) == 2)

/* ---- widening ------------------------------------------------------------------------------------ */

/* GP_NL64 elements widened to doubles or 64-bit words.  An instruction set's file may bring its own
 * (GP_ISA_WIDEN): GCC 12 compiles __builtin_convertvector's widenings to 512-bit vectors as 128-bit
 * pieces, four instructions where AVX-512 has one.  Every form gives the same bits. */
#ifndef GP_ISA_WIDEN
GP_INLINE gp_f64v gp_widen_f32(gp_f32h v) { return __builtin_convertvector(v, gp_f64v); }
GP_INLINE gp_f64v gp_widen_i32_f64(gp_i32h v) { return __builtin_convertvector(v, gp_f64v); }
GP_INLINE gp_u64v gp_widen_i32(gp_i32h v) { return __builtin_convertvector(v, gp_u64v); }
GP_INLINE gp_u64v gp_widen_u32(gp_u32h v) { return __builtin_convertvector(v, gp_u64v); }
GP_INLINE gp_u64v gp_widen_i16(gp_i16q v) { return __builtin_convertvector(v, gp_u64v); }
GP_INLINE gp_u64v gp_widen_u16(gp_u16q v) { return __builtin_convertvector(v, gp_u64v); }
GP_INLINE gp_u64v gp_widen_i8(gp_i8e v) { return __builtin_convertvector(v, gp_u64v); }
GP_INLINE gp_u64v gp_widen_u8(gp_u8e v) { return __builtin_convertvector(v, gp_u64v); }
#endif

/* The low and high halves of a native vector of 4-byte lanes, widened to doubles. */
#if GP_NATIVE_BYTES == 64
#define GP_LOW_LANES(v) __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7)
#define GP_HIGH_LANES(v) __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15)
#elif GP_NATIVE_BYTES == 32
#define GP_LOW_LANES(v) __builtin_shufflevector(v, v, 0, 1, 2, 3)
#define GP_HIGH_LANES(v) __builtin_shufflevector(v, v, 4, 5, 6, 7)
#else
#define GP_LOW_LANES(v) __builtin_shufflevector(v, v, 0, 1)
#define GP_HIGH_LANES(v) __builtin_shufflevector(v, v, 2, 3)
#endif
GP_INLINE gp_f64v gp_low_f64(gp_f32v v) { return gp_widen_f32(GP_LOW_LANES(v)); }
GP_INLINE gp_f64v gp_high_f64(gp_f32v v) { return gp_widen_f32(GP_HIGH_LANES(v)); }

/* ---- float32 and float64 min/max ---------------------------------------------------------------- */

/* v or a, whichever is smaller (larger): a when they are equal or either is a NaN, which is what
 * x86's MINPS/MAXPS do; and NaN flags gathered over vectors.  AVX-512's file brings its own
 * (GP_ISA_FLOAT_MINMAX), with the flags in a mask register. */
#ifndef GP_ISA_FLOAT_MINMAX
typedef gp_i32v gp_nans32;
typedef gp_i64v gp_nans64;
GP_INLINE gp_f32v gp_min_f32(gp_f32v v, gp_f32v a) { return GP_SELECT(gp_i32v, v < a, v, a); }
GP_INLINE gp_f32v gp_max_f32(gp_f32v v, gp_f32v a) { return GP_SELECT(gp_i32v, v > a, v, a); }
GP_INLINE gp_f64v gp_min_f64(gp_f64v v, gp_f64v a) { return GP_SELECT(gp_i64v, v < a, v, a); }
GP_INLINE gp_f64v gp_max_f64(gp_f64v v, gp_f64v a) { return GP_SELECT(gp_i64v, v > a, v, a); }
GP_INLINE gp_nans32 gp_no_nans32(void) { return (gp_nans32){0}; }
GP_INLINE gp_nans64 gp_no_nans64(void) { return (gp_nans64){0}; }
GP_INLINE gp_nans32 gp_nans_f32(gp_nans32 seen, gp_f32v v) { return seen | (gp_i32v)(v != v); }
GP_INLINE gp_nans64 gp_nans_f64(gp_nans64 seen, gp_f64v v) { return seen | (gp_i64v)(v != v); }
GP_INLINE int gp_any_nans32(gp_nans32 seen)
{
    uint64_t words[GP_NL64], any = 0;
    memcpy(words, &seen, sizeof words);
    for (int j = 0; j < GP_NL64; ++j) any |= words[j];
    return any != 0;
}
GP_INLINE int gp_any_nans64(gp_nans64 seen) { return gp_any_nans32((gp_nans32)seen); }
#endif

/* Integer min/max of native vectors of lanes TYPE (their values: ties are the same bits, so the
 * selections' results).  AVX-512's file brings its own (GP_ISA_INT_MINMAX: VPMINSD and the like, one
 * instruction where GCC emits a compare and a blend). */
#ifndef GP_ISA_INT_MINMAX
#define GP_INT_MINMAX(SUFFIX, TYPE)                                                                \
    GP_INLINE TYPE gp_min_##SUFFIX(TYPE v, TYPE a) { return GP_SELECT(TYPE, v < a, v, a); }        \
    GP_INLINE TYPE gp_max_##SUFFIX(TYPE v, TYPE a) { return GP_SELECT(TYPE, v > a, v, a); }
GP_INT_MINMAX(i32, gp_i32v)
GP_INT_MINMAX(u32, gp_u32v)
GP_INT_MINMAX(i64, gp_i64v)
GP_INT_MINMAX(u64, gp_u64v)
#undef GP_INT_MINMAX
#endif

GP_INLINE int any_lane_set(const void *mask)
{
    uint64_t words[GP_NL64], any = 0;
    memcpy(words, mask, sizeof words);
    for (int j = 0; j < GP_NL64; ++j) any |= words[j];
    return any != 0;
}

/* The lanewise min (max) of two native vectors of 4- or 8-byte lanes, by their type: the hooks above
 * (NaN lanes aside, whichever is smaller or larger). */
#define gp_vec_min(a, b)                                                                           \
    _Generic((a), gp_f32v: gp_min_f32, gp_f64v: gp_min_f64, gp_i32v: gp_min_i32, gp_u32v: gp_min_u32, \
             gp_i64v: gp_min_i64, gp_u64v: gp_min_u64)(a, b)
#define gp_vec_max(a, b)                                                                           \
    _Generic((a), gp_f32v: gp_max_f32, gp_f64v: gp_max_f64, gp_i32v: gp_max_i32, gp_u32v: gp_max_u32, \
             gp_i64v: gp_max_i64, gp_u64v: gp_max_u64)(a, b)

/* v, a native vector of 4- (size 4) or 8-byte lanes (size 8, a literal), with lane j taken from lane
 * j ^ h: one shuffle, a step of a butterfly that leaves every lane with the fold of its group in
 * log2(lanes) steps.  h is a power of two below the lanes, a constant once the loop around is
 * unrolled; the shuffle needs literal lanes, hence the cases (each kept in range by the modulo). */
#define GP_XOR_LANES(size, v, h)                                                                   \
    ((h) == 1 ? GP_XOR_LANES_BY(size, v, 1) : (h) == 2 ? GP_XOR_LANES_BY(size, v, 2)                \
     : (h) == 4 ? GP_XOR_LANES_BY(size, v, 4) : GP_XOR_LANES_BY(size, v, 8))
#define GP_XOR_LANES_BY(size, v, h) GP_XOR_LANES_OF_##size(v, h)
#if GP_NATIVE_BYTES == 64
#define GP_XOR_LANES_OF_4(v, h) GP_XOR_LANES_16(v, h)
#define GP_XOR_LANES_OF_8(v, h) GP_XOR_LANES_8(v, (h) % 8)
#elif GP_NATIVE_BYTES == 32
#define GP_XOR_LANES_OF_4(v, h) GP_XOR_LANES_8(v, (h) % 8)
#define GP_XOR_LANES_OF_8(v, h) GP_XOR_LANES_4(v, (h) % 4)
#else
#define GP_XOR_LANES_OF_4(v, h) GP_XOR_LANES_4(v, (h) % 4)
#define GP_XOR_LANES_OF_8(v, h) GP_XOR_LANES_2(v, (h) % 2)
#endif
#define GP_XOR_LANES_2(v, h) __builtin_shufflevector(v, v, 0 ^ (h), 1 ^ (h))
#define GP_XOR_LANES_4(v, h) __builtin_shufflevector(v, v, 0 ^ (h), 1 ^ (h), 2 ^ (h), 3 ^ (h))
#define GP_XOR_LANES_8(v, h)                                                                       \
    __builtin_shufflevector(v, v, 0 ^ (h), 1 ^ (h), 2 ^ (h), 3 ^ (h), 4 ^ (h), 5 ^ (h), 6 ^ (h), 7 ^ (h))
#define GP_XOR_LANES_16(v, h)                                                                      \
    __builtin_shufflevector(v, v, 0 ^ (h), 1 ^ (h), 2 ^ (h), 3 ^ (h), 4 ^ (h), 5 ^ (h), 6 ^ (h), 7 ^ (h), 8 ^ (h), \
                            9 ^ (h), 10 ^ (h), 11 ^ (h), 12 ^ (h), 13 ^ (h), 14 ^ (h), 15 ^ (h))

/* ---- float16 ------------------------------------------------------------------------------------ */

/* float16 bit patterns as floats (exact): the magnitude's bits shifted into a float's place and
 * scaled by 2^112 give normal and subnormal values; infinities and NaNs get the float exponent. */
GP_INLINE gp_f32v half_to_f32(gp_u16h h)
{
    const gp_u32v bits = __builtin_convertvector(h, gp_u32v);
    const gp_u32v magnitude = (bits & 0x7fff) << 13;
    const gp_u32v scaled = (gp_u32v)((gp_f32v)magnitude * 0x1p112f);
    const gp_u32v special = magnitude | 0x7f800000u;
    const gp_u32v value = GP_SELECT(gp_u32v, magnitude >= (0x7c00u << 13), special, scaled);
    return (gp_f32v)(value | ((bits & 0x8000) << 16));
}

/* Floats as float16 bit patterns, rounded to nearest even: normal results by rebiasing the exponent
 * and rounding the dropped 13 bits; subnormal ones by adding 0.5, whose ulp (2^-24) is a float16
 * subnormal's, so that the FPU rounds; overflow to infinity; NaNs as a quiet NaN. */
GP_INLINE gp_u16h f32_to_half(gp_f32v f)
{
    const gp_u32v bits = (gp_u32v)f;
    const gp_u32v magnitude = bits & 0x7fffffffu;
    const gp_u32v normal = (magnitude - 0x38000000u + 0xfffu + ((magnitude >> 13) & 1)) >> 13;
    const gp_u32v subnormal = (gp_u32v)((gp_f32v)magnitude + 0.5f) - 0x3f000000u;
    gp_u32v half = GP_SELECT(gp_u32v, magnitude < 0x38800000u, subnormal, normal);
    half = GP_SELECT(gp_u32v, magnitude >= 0x477ff000u, GP_SPLAT(gp_u32v, 0x7c00u), half);
    half = GP_SELECT(gp_u32v, magnitude > 0x7f800000u, GP_SPLAT(gp_u32v, 0x7e00u), half);
    return __builtin_convertvector(half | ((bits >> 16) & 0x8000u), gp_u16h);
}

/* float16 bits as integers in the order of their values (sign-magnitude to two's complement); the
 * map is its own inverse.  NaNs sort beyond the infinities: the loops test them apart. */
GP_INLINE gp_i16v half_keys(gp_u16v h)
{
    const gp_i16v s = (gp_i16v)h;
    return s ^ ((s >> 15) & 0x7fff);
}

GP_INLINE gp_i16v half_nan_mask(gp_u16v h) { return (gp_i16v)((h & 0x7fff) > 0x7c00); }

/* ---- logical vectors: horizontal folds and pairwise sums ------------------------------------------ */

/* The sum, product, min or max (gp_scan_combine's) of a logical vector of 8 doubles (GP_PARTS
 * natives, lanes in order): lanes j and j + 4, then j and j + 2, then the last two: one tree on
 * every path. */
GP_INLINE double lf64_fold(const gp_f64v *v, const gp_op op)
{
    gp_partial a[8];
    for (int j = 0; j < 8; ++j) a[j].f = v[j / GP_NL64][j % GP_NL64];
    for (int half = 4; half > 0; half /= 2)
        for (int j = 0; j < half; ++j) gp_scan_combine(GP_ACC_F64, op, 0, &a[j], &a[j + half]);
    return a[0].f;
}

GP_INLINE double lf64_sum(const gp_f64v *v) { return lf64_fold(v, GP_SUM); }
GP_INLINE double lf64_product(const gp_f64v *v) { return lf64_fold(v, GP_PROD); }

/* The 8 words of a logical vector combined in lane order (gp_scan_combine's word operators). */
GP_INLINE uint64_t lu64_fold(const gp_u64v *v, const gp_op op, const int rule)
{
    gp_partial total = gp_scan_identity(op, rule), lane = total;
    for (int j = 0; j < 8; ++j) {
        lane.u = v[j / GP_NL64][j % GP_NL64];
        gp_scan_combine(GP_ACC_WORD, op, rule, &total, &lane);
    }
    return total.u;
}

/* A binary counter of logical vectors of partial sums: the k-th push merges the partial sums of the
 * levels set in k, so that pushes 0 .. 2^j - 1 end as one sum over a complete binary tree. */
typedef struct {
    gp_f64v level[64][GP_PARTS];
    uint64_t count;
} cascade;

GP_INLINE void cascade_push(cascade *c, gp_f64v *v)
{
    int level = 0;
    for (; (c->count >> level) & 1; ++level) {
        GP_UNROLL(16)
        for (int p = 0; p < GP_PARTS; ++p) v[p] = c->level[level][p] + v[p];
    }
    memcpy(c->level[level], v, sizeof c->level[level]);
    ++c->count;
}

GP_INLINE double cascade_sum(const cascade *c)
{
    gp_f64v total[GP_PARTS];
    GP_UNROLL(16)
    for (int p = 0; p < GP_PARTS; ++p) total[p] = GP_SPLAT(gp_f64v, -0.0);
    for (int level = 0; (c->count >> level) != 0; ++level) {
        if (!((c->count >> level) & 1)) continue;
        GP_UNROLL(16)
        for (int p = 0; p < GP_PARTS; ++p) total[p] = c->level[level][p] + total[p];
    }
    return lf64_sum(total);
}

#define GP_ADD(a, b) ((a) + (b))
#define GP_MULTIPLY(a, b) ((a) * (b))
#define GP_LESS(a, b) ((a) < (b))
#define GP_GREATER(a, b) ((a) > (b))

/* Stores the first n (up to the vector's) lanes of v at out. */
#define GP_STORE_PART(out, v, n)                                                                   \
    do {                                                                                           \
        const __typeof__(v) stored_ = (v);                                                         \
        const int64_t lanes_ = (int64_t)(sizeof stored_ / sizeof stored_[0]);                      \
        if ((n) >= lanes_) memcpy((out), &stored_, sizeof stored_);                                \
        else if ((n) > 0) memcpy((out), &stored_, (size_t)(n) * sizeof stored_[0]);                \
    } while (0)

/* ---- loads, per dtype ---------------------------------------------------------------------------- */

/* load_f64: GP_NL64 elements as doubles; load_f32: GP_NL32 as floats (float16 and float32 only);
 * load_word: GP_NL64 as 64-bit integers (integers and bool; C's conversion sign- or zero-extends);
 * load_vec: a native vector.  The _part forms read only the first n (n may be 0 or less) and give
 * `fill` (an element) for the others. */
/* load_KIND_part_NAME: the first n of LANES elements (n may be 0 or less), `fill` for the others. */
#define GP_LOAD_PART(NAME, KIND, VEC, LANES)                                                       \
    GP_INLINE VEC load_##KIND##_part_##NAME(const gp_lane_##NAME *p, int64_t n, gp_lane_##NAME fill) \
    {                                                                                              \
        if (n >= LANES) return load_##KIND##_##NAME(p);                                            \
        gp_lane_##NAME lanes[LANES];                                                               \
        for (int j = 0; j < LANES; ++j) lanes[j] = j < n ? p[j] : fill;                            \
        return load_##KIND##_##NAME(lanes);                                                        \
    }

#define GP_LOADS(NAME, numpy_name, kind, size, host_type, device_type)                            \
    GP_INLINE gp_f64v load_f64_##NAME(const gp_lane_##NAME *p)                                     \
    {                                                                                              \
        if (GP_IS_HALF(kind, size)) {                                                              \
            gp_u16h lanes = {0};                                                                   \
            memcpy(&lanes, p, GP_NL64 * 2);                                                        \
            return gp_low_f64(half_to_f32(lanes));                                                 \
        }                                                                                          \
        if (kind == 'f' && size == 4) return gp_widen_f32(GP_LOAD(gp_f32h, p));                   \
        if (kind == 'i' && size == 4) return gp_widen_i32_f64(GP_LOAD(gp_i32h, p));               \
        return __builtin_convertvector(GP_LOAD(gp_vec64_##NAME, p), gp_f64v);                     \
    }                                                                                              \
    GP_INLINE gp_f32v load_f32_##NAME(const gp_lane_##NAME *p)                                     \
    {                                                                                              \
        if (GP_IS_HALF(kind, size)) return half_to_f32(GP_LOAD(gp_u16h, p));                      \
        return __builtin_convertvector(GP_LOAD(gp_vec32_##NAME, p), gp_f32v);                     \
    }                                                                                              \
    GP_INLINE gp_u64v load_word_##NAME(const gp_lane_##NAME *p)                                    \
    {                                                                                              \
        const int is_signed = kind == 'i';                                                         \
        if (size == 4) return is_signed ? gp_widen_i32(GP_LOAD(gp_i32h, p)) : gp_widen_u32(GP_LOAD(gp_u32h, p)); \
        if (size == 2) return is_signed ? gp_widen_i16(GP_LOAD(gp_i16q, p)) : gp_widen_u16(GP_LOAD(gp_u16q, p)); \
        if (size == 1) return is_signed ? gp_widen_i8(GP_LOAD(gp_i8e, p)) : gp_widen_u8(GP_LOAD(gp_u8e, p)); \
        return __builtin_convertvector(GP_LOAD(gp_vec64_##NAME, p), gp_u64v);                     \
    }                                                                                              \
    GP_LOAD_PART(NAME, f64, gp_f64v, GP_NL64)                                                      \
    GP_LOAD_PART(NAME, f32, gp_f32v, GP_NL32)                                                      \
    GP_LOAD_PART(NAME, word, gp_u64v, GP_NL64)                                                     \
    GP_INLINE gp_vec_##NAME load_vec_part_##NAME(const gp_lane_##NAME *p, int64_t n, gp_lane_##NAME fill) \
    {                                                                                              \
        enum { L = GP_NATIVE_BYTES / size };                                                       \
        if (n >= L) return GP_LOAD(gp_vec_##NAME, p);                                              \
        gp_vec_##NAME v = GP_SPLAT(gp_vec_##NAME, fill);                                           \
        if (n > 0) memcpy(&v, p, (size_t)n * size);                                                \
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
#undef GP_LOAD_PART

/* ---- min and max --------------------------------------------------------------------------------- */

/* Per dtype: ord_NAME, the vectors compared (float16: keys), and its lanes' NaN masks. */
#define GP_ORDER(NAME, numpy_name, kind, size, host_type, device_type)                            \
    typedef __typeof__(_Generic((host_type){0}, gp_half: (gp_i16v){0}, default: (gp_vec_##NAME){0})) ord_##NAME; \
    GP_INLINE ord_##NAME to_order_##NAME(gp_vec_##NAME v)                                          \
    {                                                                                              \
        if (GP_IS_HALF(kind, size)) return (ord_##NAME)half_keys((gp_u16v)v);                      \
        return (ord_##NAME)v;                                                                      \
    }                                                                                              \
    GP_INLINE gp_vec_##NAME from_order_##NAME(ord_##NAME v)                                        \
    {                                                                                              \
        if (GP_IS_HALF(kind, size)) return (gp_vec_##NAME)half_keys((gp_u16v)v);                   \
        return (gp_vec_##NAME)v;                                                                   \
    }                                                                                              \
    GP_INLINE gp_mvec_##NAME nan_mask_##NAME(gp_vec_##NAME v)                                      \
    {                                                                                              \
        if (GP_IS_HALF(kind, size)) return (gp_mvec_##NAME)half_nan_mask((gp_u16v)v);              \
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

/* min/max's selection of v's keys over acc where `better` (v's keys compare better); NaN lanes
 * noted in *nan, or with skip_nan never selected (float16's keys order NaNs beyond the
 * infinities; other NaNs compare false, so `better` is already false for them). */
#define GP_MINMAX_SELECT(NAME, numpy_name, kind, size, host_type, device_type)                    \
    GP_INLINE ord_##NAME minmax_select_##NAME(gp_vec_##NAME v, ord_##NAME acc, gp_mvec_##NAME *nan, \
                                              gp_mvec_##NAME better, const int skip_nan)           \
    {                                                                                              \
        if (!skip_nan) *nan |= nan_mask_##NAME(v);                                                 \
        else if (GP_IS_HALF(kind, size)) better &= ~nan_mask_##NAME(v);                            \
        return GP_SELECT(gp_mvec_##NAME, better, to_order_##NAME(v), acc);                         \
    }
GP_DTYPES(GP_MINMAX_SELECT)
#undef GP_MINMAX_SELECT

/* The min (BETTER = GP_LESS) or max (GP_GREATER) of count contiguous elements: four logical
 * accumulators (4 * GP_PARTS native ones), the tail padded with the first element, then the
 * accumulators folded into the first and its lanes in order.  The selections pass NaNs by; flags of
 * NaN lanes are kept beside them, and when one is set the piece's first NaN is the result.  float32
 * and float64 go through gp_min_f32 ... (the same selections, an instruction each where the
 * instruction set has one). */
#define GP_MINMAX_RUN(NAME, kind, size, OP, BETTER, OPNAME, SKIP_NAN)                              \
    static void minmax_run_##OPNAME##_##NAME(const void *in, int64_t count, gp_partial *partial)   \
    {                                                                                              \
        enum { L = GP_NATIVE_BYTES / size, N = 4 * GP_PARTS, STEP = N * L };                       \
        enum { F32 = kind == 'f' && size == 4, F64 = kind == 'f' && size == 8 };                   \
        const gp_lane_##NAME *x = in;                                                              \
        int64_t start = 0; /* SKIP_NAN: the first number, the accumulators' start and the tail's fill */ \
        if (SKIP_NAN) {                                                                            \
            while (start < count && is_nan_##NAME(x[start])) ++start;                              \
            if (start == count) { /* NaNs only: the piece's result is its first NaN */             \
                partial->u = 0;                                                                    \
                memcpy(&partial->u, x, size);                                                      \
                partial->nan = 1;                                                                  \
                return;                                                                            \
            }                                                                                      \
        }                                                                                          \
        const gp_lane_##NAME fill = x[start];                                                      \
        const ord_##NAME first = to_order_##NAME(GP_SPLAT(gp_vec_##NAME, fill));                   \
        ord_##NAME acc[N];                                                                         \
        gp_nans32 nans32[N];                                                                       \
        gp_nans64 nans64[N];                                                                       \
        GP_UNROLL(16)                                                                              \
        for (int i = 0; i < N; ++i) {                                                              \
            acc[i] = first;                                                                        \
            nans32[i] = gp_no_nans32();                                                            \
            nans64[i] = gp_no_nans64();                                                            \
        }                                                                                          \
        gp_mvec_##NAME nan = {0};                                                                  \
        int64_t k = 0;                                                                             \
        for (; k + STEP <= count; k += STEP)                                                       \
            GP_UNROLL(16)                                                                          \
            for (int i = 0; i < N; ++i) {                                                          \
                const gp_vec_##NAME v = GP_LOAD(gp_vec_##NAME, x + k + i * L);                      \
                if (F32) {                                                                         \
                    acc[i] = (ord_##NAME)gp_##OP##_f32((gp_f32v)v, (gp_f32v)acc[i]);               \
                    if (!SKIP_NAN) nans32[i] = gp_nans_f32(nans32[i], (gp_f32v)v);                 \
                } else if (F64) {                                                                  \
                    acc[i] = (ord_##NAME)gp_##OP##_f64((gp_f64v)v, (gp_f64v)acc[i]);               \
                    if (!SKIP_NAN) nans64[i] = gp_nans_f64(nans64[i], (gp_f64v)v);                 \
                } else if (kind == 'i' && size == 4) {                                             \
                    acc[i] = (ord_##NAME)gp_##OP##_i32((gp_i32v)v, (gp_i32v)acc[i]);               \
                } else if (kind == 'u' && size == 4) {                                             \
                    acc[i] = (ord_##NAME)gp_##OP##_u32((gp_u32v)v, (gp_u32v)acc[i]);               \
                } else if (kind == 'i' && size == 8) {                                             \
                    acc[i] = (ord_##NAME)gp_##OP##_i64((gp_i64v)v, (gp_i64v)acc[i]);               \
                } else if (kind == 'u' && size == 8) {                                             \
                    acc[i] = (ord_##NAME)gp_##OP##_u64((gp_u64v)v, (gp_u64v)acc[i]);               \
                } else {                                                                           \
                    acc[i] = minmax_select_##NAME(v, acc[i], &nan, BETTER(to_order_##NAME(v), acc[i]), SKIP_NAN); \
                }                                                                                  \
            }                                                                                      \
        for (; k < count; k += GP_PARTS * L) /* logical vectors into the first accumulator */      \
            GP_UNROLL(16)                                                                          \
            for (int p = 0; p < GP_PARTS; ++p) {                                                   \
                const int64_t at = k + p * L;                                                      \
                if (at >= count) continue;                                                         \
                const gp_vec_##NAME v = load_vec_part_##NAME(x + at, count - at, fill);            \
                acc[p] = minmax_select_##NAME(v, acc[p], &nan, BETTER(to_order_##NAME(v), acc[p]), SKIP_NAN); \
            }                                                                                      \
        int any_nan = !SKIP_NAN && any_lane_set(&nan);                                             \
        GP_UNROLL(16)                                                                              \
        for (int i = 0; i < N; ++i)                                                                \
            any_nan |= (F32 && gp_any_nans32(nans32[i])) || (F64 && gp_any_nans64(nans64[i]));     \
        if (any_nan) {                                                                             \
            for (k = 0; !is_nan_##NAME(x[k]); ++k) continue;                                       \
            partial->u = 0;                                                                        \
            memcpy(&partial->u, x + k, size);                                                      \
            partial->nan = 1;                                                                      \
            return;                                                                                \
        }                                                                                          \
        GP_UNROLL(16)                                                                              \
        for (int i = GP_PARTS; i < N; ++i) {                                                       \
            const int p = i % GP_PARTS;                                                            \
            acc[p] = GP_SELECT(gp_mvec_##NAME, BETTER(acc[i], acc[p]), acc[i], acc[p]);            \
        }                                                                                          \
        __typeof__(acc[0][0]) lanes[GP_PARTS * L];                                                 \
        memcpy(lanes, acc, sizeof lanes);                                                          \
        __typeof__(acc[0][0]) best = lanes[0];                                                     \
        for (int j = 1; j < GP_PARTS * L; ++j) best = BETTER(lanes[j], best) ? lanes[j] : best;    \
        const gp_vec_##NAME value = from_order_##NAME(GP_SPLAT(ord_##NAME, best)); /* -0.0 kept */  \
        partial->u = 0;                                                                            \
        memcpy(&partial->u, &value, size);                                                         \
        partial->nan = 0;                                                                          \
    }

/* ---- sums and products in 64-bit words ------------------------------------------------------------ */

#define GP_WORD_RUN(NAME, kind, size, OP, COMBINE, IDENTITY)                                       \
    static void word_run_##OP##_##NAME(const void *in, int64_t count, gp_partial *partial)        \
    {                                                                                              \
        enum { N = 4 * GP_PARTS };                                                                 \
        const gp_lane_##NAME *x = in;                                                              \
        gp_u64v acc[N];                                                                            \
        GP_UNROLL(16)                                                                              \
        for (int i = 0; i < N; ++i) acc[i] = GP_SPLAT(gp_u64v, IDENTITY);                          \
        int64_t k = 0;                                                                             \
        for (; k + 32 <= count; k += 32)                                                           \
            GP_UNROLL(16)                                                                          \
            for (int i = 0; i < N; ++i) acc[i] = COMBINE(acc[i], load_word_##NAME(x + k + i * GP_NL64)); \
        for (; k < count; k += GP_NL64)                                                            \
            acc[0] = COMBINE(acc[0], load_word_part_##NAME(x + k, count - k, (gp_lane_##NAME)IDENTITY)); \
        GP_UNROLL(16)                                                                              \
        for (int i = 1; i < N; ++i) acc[0] = COMBINE(acc[0], acc[i]);                              \
        uint64_t total = acc[0][0];                                                                \
        for (int j = 1; j < GP_NL64; ++j) total = COMBINE(total, acc[0][j]);                       \
        partial->u = total;                                                                        \
    }

/* ---- float sums and products ---------------------------------------------------------------------- */

/* skip_nan's lanes (a constant in every loop): NaN read as `identity`. */
GP_INLINE gp_f64v skip_nan_f64(gp_f64v v, const int skip_nan, double identity)
{
    return skip_nan ? GP_SELECT(gp_i64v, v != v, GP_SPLAT(gp_f64v, identity), v) : v;
}
GP_INLINE gp_f32v skip_nan_f32(gp_f32v v, const int skip_nan, float identity)
{
    return skip_nan ? GP_SELECT(gp_i32v, v != v, GP_SPLAT(gp_f32v, identity), v) : v;
}

/* One block of a sum in double lanes: up to 256 elements, four logical accumulators of 8 lanes
 * adding 8 elements each, folded as (a0 + a1) + (a2 + a3) into the logical vector out. */
#define GP_F64_RUN(NAME, kind, size)                                                               \
    GP_INLINE void f64_sum_block_##NAME(const gp_lane_##NAME *x, int64_t n, gp_f64v *out, const int skip_nan) \
    {                                                                                              \
        enum { N = 4 * GP_PARTS };                                                                 \
        gp_f64v a[N];                                                                              \
        GP_UNROLL(16)                                                                              \
        for (int i = 0; i < N; ++i) a[i] = GP_SPLAT(gp_f64v, -0.0);                                \
        GP_UNROLL(8)                                                                               \
        for (int s = 0; s < 8; ++s)                                                                \
            GP_UNROLL(16)                                                                          \
            for (int i = 0; i < N; ++i) {                                                          \
                const int64_t at = 32 * s + i * GP_NL64;                                           \
                if (at < n) a[i] += skip_nan_f64(load_f64_part_##NAME(x + at, n - at, zero_lane_##NAME()), skip_nan, -0.0); \
            }                                                                                      \
        GP_UNROLL(16)                                                                              \
        for (int p = 0; p < GP_PARTS; ++p)                                                         \
            out[p] = (a[p] + a[GP_PARTS + p]) + (a[2 * GP_PARTS + p] + a[3 * GP_PARTS + p]);       \
    }                                                                                              \
    GP_INLINE void f64_sum_##NAME(const void *in, int64_t count, gp_partial *partial, const int skip_nan) \
    {                                                                                              \
        const gp_lane_##NAME *x = in;                                                              \
        cascade c;                                                                                 \
        c.count = 0;                                                                               \
        gp_f64v block[GP_PARTS];                                                                   \
        int64_t k = 0;                                                                             \
        for (; k + 256 <= count; k += 256) {                                                       \
            f64_sum_block_##NAME(x + k, 256, block, skip_nan);                                     \
            cascade_push(&c, block);                                                               \
        }                                                                                          \
        if (k < count) {                                                                           \
            f64_sum_block_##NAME(x + k, count - k, block, skip_nan);                               \
            cascade_push(&c, block);                                                               \
        }                                                                                          \
        partial->f = cascade_sum(&c);                                                              \
    }                                                                                              \
    GP_INLINE void f64_prod_##NAME(const void *in, int64_t count, gp_partial *partial, const int skip_nan) \
    {                                                                                              \
        enum { N = 4 * GP_PARTS };                                                                 \
        const gp_lane_##NAME *x = in;                                                              \
        gp_f64v acc[N];                                                                            \
        GP_UNROLL(16)                                                                              \
        for (int i = 0; i < N; ++i) acc[i] = GP_SPLAT(gp_f64v, 1.0);                               \
        int64_t k = 0;                                                                             \
        for (; k + 32 <= count; k += 32)                                                           \
            GP_UNROLL(16)                                                                          \
            for (int i = 0; i < N; ++i) acc[i] *= skip_nan_f64(load_f64_##NAME(x + k + i * GP_NL64), skip_nan, 1.0); \
        for (; k < count; k += 8)                                                                  \
            GP_UNROLL(16)                                                                          \
            for (int p = 0; p < GP_PARTS; ++p) {                                                   \
                const int64_t at = k + p * GP_NL64;                                                \
                acc[p] *= skip_nan_f64(load_f64_part_##NAME(x + at, count - at, one_lane_##NAME()), skip_nan, 1.0); \
            }                                                                                      \
        gp_f64v total[GP_PARTS];                                                                   \
        GP_UNROLL(16)                                                                              \
        for (int p = 0; p < GP_PARTS; ++p)                                                         \
            total[p] = (acc[p] * acc[GP_PARTS + p]) * (acc[2 * GP_PARTS + p] * acc[3 * GP_PARTS + p]); \
        partial->f = lf64_product(total);                                                          \
    }                                                                                              \
    static void f64_run_sum_##NAME(const void *in, int64_t count, gp_partial *partial) { f64_sum_##NAME(in, count, partial, 0); } \
    static void f64_run_nansum_##NAME(const void *in, int64_t count, gp_partial *partial) { f64_sum_##NAME(in, count, partial, 1); } \
    static void f64_run_prod_##NAME(const void *in, int64_t count, gp_partial *partial) { f64_prod_##NAME(in, count, partial, 0); } \
    static void f64_run_nanprod_##NAME(const void *in, int64_t count, gp_partial *partial) { f64_prod_##NAME(in, count, partial, 1); }

/* var/std's moments of a piece (GP_ACC_MOMENTS): sums of the deviations from its first element and
 * of their squares in double lanes (two logical accumulators each; the tail, in logical vectors
 * so that every instruction set adds the same lanes, padded with the first element, whose
 * deviation is 0), then the mean and M2 from them.  Shifting by an element keeps the
 * sums from cancelling when the mean is far from 0.  With skip_nan (nanvar, nanstd, nanmean) the
 * shift is the first number, NaN lanes add 0 and the numbers are counted (a piece of NaNs: count 0). */
#define GP_MOMENTS_RUN(NAME, kind, size)                                                           \
    GP_INLINE void moments_##NAME(const void *in, int64_t count, gp_partial *partial, const int skip_nan) \
    {                                                                                              \
        enum { N = 2 * GP_PARTS };                                                                 \
        const gp_lane_##NAME *x = in;                                                              \
        int64_t start = 0, numbers = count;                                                        \
        if (skip_nan) {                                                                            \
            while (start < count && is_nan_##NAME(x[start])) ++start;                              \
            if (start == count) {                                                                  \
                *partial = (gp_partial){.f = 0.0, .u = 0, .m2 = 0.0};                              \
                return;                                                                            \
            }                                                                                      \
            numbers = 0;                                                                           \
        }                                                                                          \
        const gp_lane_##NAME fill = x[start];                                                      \
        const double first = load_f64_part_##NAME(&fill, 1, fill)[0];                              \
        const gp_f64v shift = GP_SPLAT(gp_f64v, first), zero = GP_SPLAT(gp_f64v, 0.0);              \
        gp_f64v s1[N], s2[N];                                                                      \
        gp_i64v counted[N];                                                                        \
        GP_UNROLL(16)                                                                              \
        for (int i = 0; i < N; ++i) {                                                              \
            s1[i] = s2[i] = zero;                                                                  \
            counted[i] = (gp_i64v){0};                                                             \
        }                                                                                          \
        int64_t k = 0;                                                                             \
        for (; k + N * GP_NL64 <= count; k += N * GP_NL64)                                         \
            GP_UNROLL(16)                                                                          \
            for (int i = 0; i < N; ++i) {                                                          \
                const gp_f64v v = load_f64_##NAME(x + k + i * GP_NL64);                            \
                gp_f64v d = v - shift;                                                             \
                if (skip_nan) {                                                                    \
                    d = GP_SELECT(gp_i64v, v == v, d, zero);                                       \
                    counted[i] -= (gp_i64v)(v == v);                                               \
                }                                                                                  \
                s1[i] += d;                                                                        \
                s2[i] += d * d;                                                                    \
            }                                                                                      \
        if (skip_nan) {                                                                            \
            GP_UNROLL(16)                                                                          \
            for (int i = 1; i < N; ++i) counted[0] += counted[i];                                  \
            for (int j = 0; j < GP_NL64; ++j) numbers += counted[0][j];                            \
            for (int64_t i = k; i < count; ++i) numbers += !is_nan_##NAME(x[i]);                   \
        }                                                                                          \
        for (; k < count; k += 8) /* logical vectors into the first logical accumulators */         \
            GP_UNROLL(16)                                                                          \
            for (int p = 0; p < GP_PARTS; ++p) {                                                   \
                const int64_t at = k + p * GP_NL64;                                                \
                const gp_f64v d = skip_nan_f64(load_f64_part_##NAME(x + at, count - at, fill), skip_nan, first) - shift; \
                s1[p] += d;                                                                        \
                s2[p] += d * d;                                                                    \
            }                                                                                      \
        GP_UNROLL(16)                                                                              \
        for (int p = 0; p < GP_PARTS; ++p) {                                                       \
            s1[p] += s1[GP_PARTS + p];                                                             \
            s2[p] += s2[GP_PARTS + p];                                                             \
        }                                                                                          \
        const double sum1 = lf64_sum(s1), sum2 = lf64_sum(s2), m2 = sum2 - sum1 * (sum1 / (double)numbers); \
        partial->u = (uint64_t)numbers;                                                            \
        partial->f = first + sum1 / (double)numbers;                                               \
        partial->m2 = m2 < 0.0 ? 0.0 : m2; /* rounding can go below 0; a NaN stays */              \
    }                                                                                              \
    static void moments_run_##NAME(const void *in, int64_t count, gp_partial *partial) { moments_##NAME(in, count, partial, 0); } \
    static void nanmoments_run_##NAME(const void *in, int64_t count, gp_partial *partial) { moments_##NAME(in, count, partial, 1); }

#define GP_REDUCE_KERNELS(NAME, numpy_name, kind, size, host_type, device_type)                   \
    GP_MINMAX_RUN(NAME, kind, size, min, GP_LESS, min, 0)                                          \
    GP_MINMAX_RUN(NAME, kind, size, max, GP_GREATER, max, 0)                                       \
    GP_MINMAX_RUN(NAME, kind, size, min, GP_LESS, nanmin, 1)                                       \
    GP_MINMAX_RUN(NAME, kind, size, max, GP_GREATER, nanmax, 1)                                    \
    GP_WORD_RUN(NAME, kind, size, sum, GP_ADD, 0)                                                  \
    GP_WORD_RUN(NAME, kind, size, prod, GP_MULTIPLY, 1)                                            \
    GP_F64_RUN(NAME, kind, size)                                                                   \
    GP_MOMENTS_RUN(NAME, kind, size)
GP_DTYPES(GP_REDUCE_KERNELS)
#undef GP_REDUCE_KERNELS

/* ---- reductions along columns ------------------------------------------------------------------- */

/* Rows per pass over the accumulator row: each pass loads and stores it once.  Every column is
 * reduced on its own, in row order: the vector width changes no result. */
enum { COLUMN_PASS = 8 };

/* min/max along columns.  Plain selections, which pass NaNs by, plus a NaN mask over each pass:
 * when it is set (rarely), each column's first NaN of the pass, if its accumulator holds none yet,
 * goes in; a NaN in the accumulator then stays, since no comparison with it is true.  float16 keys
 * order NaNs beyond the infinities, so float16 keeps a NaN in its lanes by masks instead. */
#define GP_MINMAX_COLUMNS(NAME, kind, size, OP, BETTER, SKIP_NAN)                                  \
    static void minmax_columns_##OP##_##NAME(const void *in, int64_t rows, int64_t stride, int64_t width, \
                                             void *accumulator, int first)                         \
    {                                                                                              \
        enum { L = GP_NATIVE_BYTES / size };                                                       \
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
                gp_mvec_##NAME empty = SKIP_NAN ? nan_mask_##NAME(a) : (gp_mvec_##NAME){0};        \
                for (int64_t p = 0; p < pass; ++p) {                                               \
                    const gp_lane_##NAME *row = x + (r + p) * stride + j;                          \
                    const gp_vec_##NAME v = load_vec_part_##NAME(row, n, row[0]);                  \
                    const ord_##NAME vo = to_order_##NAME(v);                                      \
                    if (SKIP_NAN) { /* a number takes a lane that holds a NaN; a NaN takes none */ \
                        const gp_mvec_##NAME take = ((gp_mvec_##NAME)BETTER(vo, o) | empty) & ~nan_mask_##NAME(v); \
                        o = GP_SELECT(gp_mvec_##NAME, take, vo, o);                                \
                        empty &= ~take;                                                            \
                    } else if (GP_IS_HALF(kind, size)) {                                                  \
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
            if (SKIP_NAN || GP_IS_HALF(kind, size) || !any_lane_set(&nan_seen)) continue;          \
            for (int64_t j = 0; j < width; ++j)                                                    \
                for (int64_t p = 0; p < pass && !is_nan_##NAME(acc[j]); ++p)                       \
                    if (is_nan_##NAME(x[(r + p) * stride + j])) acc[j] = x[(r + p) * stride + j];  \
        }                                                                                          \
    }

/* Sums and products along columns in 64-bit lanes: words (integers; PREFIX word) or doubles
 * (every float result; PREFIX f64).  ACC is the accumulator row's type, LANES(p, n, fill) the
 * dtype's loads into VEC, ACC_LANES the accumulator's, START its first value, FILL an element's. */
#define GP_LANE_COLUMNS(NAME, PREFIX, OP, COMBINE, ACC, VEC, LANES, ACC_LANES, START, FILL)         \
    static void PREFIX##_columns_##OP##_##NAME(const void *in, int64_t rows, int64_t stride, int64_t width, \
                                               void *accumulator, int first)                       \
    {                                                                                              \
        const gp_lane_##NAME *x = in;                                                              \
        ACC *acc = accumulator;                                                                    \
        if (first)                                                                                 \
            for (int64_t j = 0; j < width; ++j) acc[j] = START;                                    \
        for (int64_t r = 0; r < rows; r += COLUMN_PASS) {                                          \
            const int64_t pass = rows - r < COLUMN_PASS ? rows - r : COLUMN_PASS;                  \
            for (int64_t j = 0; j < width; j += GP_NL64) {                                         \
                const int64_t n = width - j;                                                       \
                VEC a = ACC_LANES(acc + j, n, START);                                              \
                for (int64_t p = 0; p < pass; ++p) a = COMBINE(a, LANES(x + (r + p) * stride + j, n, FILL)); \
                GP_STORE_PART(acc + j, a, n);                                                      \
            }                                                                                      \
        }                                                                                          \
    }

/* float32 and float16 sums and products with a float32 or float16 result combine each pass's rows
 * in float32 first (COLUMN_PASS - 1 roundings, where NumPy combines every row in float32), then in
 * double.  START is the identity, FILL_LANE the lanes past the row's end. */
#define GP_F32_COLUMNS(NAME, OP, COMBINE, START, FILL_LANE, SKIP_NAN)                              \
    static void f32_columns_##OP##_##NAME(const void *in, int64_t rows, int64_t stride, int64_t width, \
                                          void *accumulator, int first)                            \
    {                                                                                              \
        const gp_lane_##NAME *x = in;                                                              \
        double *acc = accumulator;                                                                 \
        if (first)                                                                                 \
            for (int64_t j = 0; j < width; ++j) acc[j] = START;                                    \
        for (int64_t r = 0; r < rows; r += COLUMN_PASS) {                                          \
            const int64_t pass = rows - r < COLUMN_PASS ? rows - r : COLUMN_PASS;                  \
            for (int64_t j = 0; j < width; j += GP_NL32) {                                         \
                const int64_t n = width - j;                                                       \
                gp_f32v block = skip_nan_f32(load_f32_part_##NAME(x + r * stride + j, n, FILL_LANE), SKIP_NAN, START); \
                for (int64_t p = 1; p < pass; ++p)                                                 \
                    block = COMBINE(block, skip_nan_f32(load_f32_part_##NAME(x + (r + p) * stride + j, n, FILL_LANE), \
                                                        SKIP_NAN, START));                         \
                const gp_f64v lo = COMBINE(load_f64_part_FLOAT64(acc + j, n, START), gp_low_f64(block)); \
                const gp_f64v hi = COMBINE(load_f64_part_FLOAT64(acc + j + GP_NL64, n - GP_NL64, START), \
                                           gp_high_f64(block));                                    \
                GP_STORE_PART(acc + j, lo, n);                                                     \
                GP_STORE_PART(acc + j + GP_NL64, hi, n - GP_NL64);                                 \
            }                                                                                      \
        }                                                                                          \
    }

/* var/std along columns: every row in one call; the first row is each column's shift (see
 * gp_reduce_columns_fn for acc's layout).  With skip_nan the shift is each column's first number,
 * NaN rows add 0 and each column's numbers are counted into a fourth row of acc. */
#define GP_MOMENTS_COLUMNS(NAME, kind, size)                                                       \
    GP_INLINE void moments_columns_body_##NAME(const void *in, int64_t rows, int64_t stride, int64_t width, \
                                               void *accumulator, const int skip_nan)              \
    {                                                                                              \
        const gp_lane_##NAME *x = in;                                                              \
        double *shift = accumulator, *s1 = shift + width, *s2 = s1 + width, *counted = s2 + width; \
        const gp_f64v zero = GP_SPLAT(gp_f64v, 0.0), one = GP_SPLAT(gp_f64v, 1.0);                 \
        for (int64_t j = 0; j < width; j += GP_NL64) {                                             \
            const int64_t n = width - j;                                                           \
            GP_STORE_PART(shift + j, load_f64_part_##NAME(x + j, n, zero_lane_##NAME()), n);        \
        }                                                                                          \
        if (skip_nan)                                                                              \
            for (int64_t j = 0; j < width; ++j) {                                                  \
                int64_t r = 0;                                                                     \
                while (r < rows && is_nan_##NAME(x[r * stride + j])) ++r;                          \
                shift[j] = r < rows ? load_f64_part_##NAME(x + r * stride + j, 1, x[j])[0] : 0.0;  \
            }                                                                                      \
        memset(s1, 0, (size_t)((skip_nan ? 3 : 2) * width) * sizeof *s1);                          \
        for (int64_t r = skip_nan ? 0 : 1; r < rows; r += COLUMN_PASS) {                           \
            const int64_t pass = rows - r < COLUMN_PASS ? rows - r : COLUMN_PASS;                  \
            for (int64_t j = 0; j < width; j += GP_NL64) {                                         \
                const int64_t n = width - j;                                                       \
                const gp_f64v c = load_f64_part_FLOAT64(shift + j, n, 0.0);                        \
                gp_f64v a1 = load_f64_part_FLOAT64(s1 + j, n, 0.0), a2 = load_f64_part_FLOAT64(s2 + j, n, 0.0); \
                gp_f64v numbers = skip_nan ? load_f64_part_FLOAT64(counted + j, n, 0.0) : zero;    \
                for (int64_t p = 0; p < pass; ++p) {                                               \
                    const gp_f64v v = load_f64_part_##NAME(x + (r + p) * stride + j, n, zero_lane_##NAME()); \
                    gp_f64v d = v - c;                                                             \
                    if (skip_nan) {                                                                \
                        d = GP_SELECT(gp_i64v, v == v, d, zero);                                   \
                        numbers += GP_SELECT(gp_i64v, v == v, one, zero);                          \
                    }                                                                              \
                    a1 += d;                                                                       \
                    a2 += d * d;                                                                   \
                }                                                                                  \
                GP_STORE_PART(s1 + j, a1, n);                                                      \
                GP_STORE_PART(s2 + j, a2, n);                                                      \
                if (skip_nan) GP_STORE_PART(counted + j, numbers, n);                              \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    static void moments_columns_##NAME(const void *in, int64_t rows, int64_t stride, int64_t width, \
                                       void *accumulator, int first)                               \
    {                                                                                              \
        (void)first; /* always set: one call takes every row */                                    \
        moments_columns_body_##NAME(in, rows, stride, width, accumulator, 0);                      \
    }                                                                                              \
    static void nanmoments_columns_##NAME(const void *in, int64_t rows, int64_t stride, int64_t width, \
                                          void *accumulator, int first)                            \
    {                                                                                              \
        (void)first;                                                                               \
        moments_columns_body_##NAME(in, rows, stride, width, accumulator, 1);                      \
    }

/* Float loads that read NaN as the identity of a sum (-0.0) or a product, for the NaN-skipping
 * column loops. */
#define GP_NAN_LOADS(NAME, numpy_name, kind, size, host_type, device_type)                        \
    GP_INLINE gp_f64v load_f64_nansum_part_##NAME(const gp_lane_##NAME *p, int64_t n, gp_lane_##NAME fill) \
    {                                                                                              \
        return skip_nan_f64(load_f64_part_##NAME(p, n, fill), 1, -0.0);                            \
    }                                                                                              \
    GP_INLINE gp_f64v load_f64_nanprod_part_##NAME(const gp_lane_##NAME *p, int64_t n, gp_lane_##NAME fill) \
    {                                                                                              \
        return skip_nan_f64(load_f64_part_##NAME(p, n, fill), 1, 1.0);                             \
    }
GP_DTYPES(GP_NAN_LOADS)
#undef GP_NAN_LOADS

#define GP_COLUMN_KERNELS(NAME, numpy_name, kind, size, host_type, device_type)                   \
    GP_MINMAX_COLUMNS(NAME, kind, size, min, GP_LESS, 0)                                           \
    GP_MINMAX_COLUMNS(NAME, kind, size, max, GP_GREATER, 0)                                        \
    GP_MINMAX_COLUMNS(NAME, kind, size, nanmin, GP_LESS, 1)                                        \
    GP_MINMAX_COLUMNS(NAME, kind, size, nanmax, GP_GREATER, 1)                                     \
    GP_LANE_COLUMNS(NAME, f64, nansum, GP_ADD, double, gp_f64v, load_f64_nansum_part_##NAME,       \
                    load_f64_part_FLOAT64, -0.0, zero_lane_##NAME())                               \
    GP_LANE_COLUMNS(NAME, f64, nanprod, GP_MULTIPLY, double, gp_f64v, load_f64_nanprod_part_##NAME, \
                    load_f64_part_FLOAT64, 1.0, one_lane_##NAME())                                 \
    GP_F32_COLUMNS(NAME, nansum, GP_ADD, -0.0, zero_lane_##NAME(), 1)                              \
    GP_F32_COLUMNS(NAME, nanprod, GP_MULTIPLY, 1.0, one_lane_##NAME(), 1)                           \
    GP_LANE_COLUMNS(NAME, word, sum, GP_ADD, uint64_t, gp_u64v, load_word_part_##NAME,             \
                    load_word_part_UINT64, 0, (gp_lane_##NAME)0)                                   \
    GP_LANE_COLUMNS(NAME, word, prod, GP_MULTIPLY, uint64_t, gp_u64v, load_word_part_##NAME,       \
                    load_word_part_UINT64, 1, (gp_lane_##NAME)1)                                   \
    GP_LANE_COLUMNS(NAME, f64, sum, GP_ADD, double, gp_f64v, load_f64_part_##NAME,                 \
                    load_f64_part_FLOAT64, -0.0, zero_lane_##NAME())                               \
    GP_LANE_COLUMNS(NAME, f64, prod, GP_MULTIPLY, double, gp_f64v, load_f64_part_##NAME,           \
                    load_f64_part_FLOAT64, 1.0, one_lane_##NAME())                                 \
    GP_F32_COLUMNS(NAME, sum, GP_ADD, -0.0, zero_lane_##NAME(), 0)                                 \
    GP_F32_COLUMNS(NAME, prod, GP_MULTIPLY, 1.0, one_lane_##NAME(), 0)                              \
    GP_MOMENTS_COLUMNS(NAME, kind, size)
GP_DTYPES(GP_COLUMN_KERNELS)
#undef GP_COLUMN_KERNELS

/* ---- argmin/argmax, any, all, count_nonzero ------------------------------------------------------ */

/* Per dtype: the lanes that are nonzero (x != 0: a NaN is, -0.0 is not), those equal in value to t
 * (float16 by its bits, -0.0 and 0.0 alike; t is never a NaN), a find mode's matches, and the keys
 * argmin/argmax compare (float16: its order keys with -0.0 folded onto 0.0, so that they tie). */
#define GP_PREDICATES(NAME, numpy_name, kind, size, host_type, device_type)                       \
    GP_INLINE gp_mvec_##NAME nonzero_mask_##NAME(gp_vec_##NAME v)                                  \
    {                                                                                              \
        if (GP_IS_HALF(kind, size)) return (gp_mvec_##NAME)(((gp_u16v)v & 0x7fff) != 0);           \
        return (gp_mvec_##NAME)(v != 0);                                                           \
    }                                                                                              \
    GP_INLINE gp_mvec_##NAME equal_mask_##NAME(gp_vec_##NAME v, gp_vec_##NAME t)                   \
    {                                                                                              \
        if (GP_IS_HALF(kind, size)) {                                                              \
            const gp_u16v a = (gp_u16v)v, b = (gp_u16v)t;                                          \
            return (gp_mvec_##NAME)((a == b) | (((a | b) & 0x7fff) == 0));                         \
        }                                                                                          \
        return (gp_mvec_##NAME)(v == t);                                                           \
    }                                                                                              \
    GP_INLINE gp_mvec_##NAME find_mask_##NAME(gp_vec_##NAME v, gp_vec_##NAME t, gp_find_mode mode) \
    {                                                                                              \
        switch (mode) {                                                                            \
        case GP_FIND_EQUAL: return equal_mask_##NAME(v, t);                                        \
        case GP_FIND_NAN: return nan_mask_##NAME(v);                                               \
        case GP_FIND_NONZERO: return nonzero_mask_##NAME(v);                                       \
        case GP_FIND_EQUAL_OR_NAN: return equal_mask_##NAME(v, t) | nan_mask_##NAME(v);            \
        default: return ~nonzero_mask_##NAME(v);                                                   \
        }                                                                                          \
    }                                                                                              \
    GP_INLINE ord_##NAME arg_order_##NAME(gp_vec_##NAME v)                                         \
    {                                                                                              \
        if (!GP_IS_HALF(kind, size)) return (ord_##NAME)v;                                         \
        const gp_i16v keys = half_keys((gp_u16v)v);                                                \
        return (ord_##NAME)(keys - (keys >> 15));                                                  \
    }
GP_DTYPES(GP_PREDICATES)
#undef GP_PREDICATES

/* find (gp_find_fn): four native vectors at a time, their masks or'ed and tested once; then vector
 * by vector, the tail padded with its first element and matches past count ignored.  The mode is a
 * constant in each instance of the body. */
#define GP_FIND(NAME, numpy_name, kind, size, host_type, device_type)                             \
    GP_INLINE int64_t find_body_##NAME(const gp_lane_##NAME *x, int64_t count, gp_vec_##NAME t,    \
                                       const gp_find_mode mode)                                    \
    {                                                                                              \
        enum { L = GP_NATIVE_BYTES / size };                                                       \
        int64_t k = 0;                                                                             \
        for (; k + 4 * L <= count; k += 4 * L) {                                                   \
            gp_mvec_##NAME m = find_mask_##NAME(GP_LOAD(gp_vec_##NAME, x + k), t, mode);           \
            GP_UNROLL(3)                                                                           \
            for (int i = 1; i < 4; ++i) m |= find_mask_##NAME(GP_LOAD(gp_vec_##NAME, x + k + i * L), t, mode); \
            if (any_lane_set(&m)) break;                                                           \
        }                                                                                          \
        for (; k < count; k += L) {                                                                \
            const int64_t n = count - k;                                                           \
            const gp_mvec_##NAME m = find_mask_##NAME(load_vec_part_##NAME(x + k, n, x[k]), t, mode); \
            if (!any_lane_set(&m)) continue;                                                       \
            for (int j = 0; j < L && j < n; ++j)                                                   \
                if (m[j]) return k + j;                                                            \
        }                                                                                          \
        return -1;                                                                                 \
    }                                                                                              \
    static int64_t find_##NAME(const void *in, int64_t count, const void *value, gp_find_mode mode) \
    {                                                                                              \
        gp_lane_##NAME target = 0;                                                                 \
        if (mode == GP_FIND_EQUAL || mode == GP_FIND_EQUAL_OR_NAN) memcpy(&target, value, size);   \
        const gp_vec_##NAME t = GP_SPLAT(gp_vec_##NAME, target);                                   \
        switch (mode) {                                                                            \
        case GP_FIND_EQUAL: return find_body_##NAME(in, count, t, GP_FIND_EQUAL);                  \
        case GP_FIND_NAN: return find_body_##NAME(in, count, t, GP_FIND_NAN);                      \
        case GP_FIND_NONZERO: return find_body_##NAME(in, count, t, GP_FIND_NONZERO);              \
        case GP_FIND_EQUAL_OR_NAN: return find_body_##NAME(in, count, t, GP_FIND_EQUAL_OR_NAN);    \
        default: return find_body_##NAME(in, count, t, GP_FIND_ZERO);                              \
        }                                                                                          \
    }                                                                                              \
    static void any_run_##NAME(const void *in, int64_t count, gp_partial *partial)                \
    {                                                                                              \
        partial->u = find_##NAME(in, count, NULL, GP_FIND_NONZERO) >= 0;                           \
    }                                                                                              \
    static void all_run_##NAME(const void *in, int64_t count, gp_partial *partial)                \
    {                                                                                              \
        partial->u = find_##NAME(in, count, NULL, GP_FIND_ZERO) < 0;                               \
    }
GP_DTYPES(GP_FIND)
#undef GP_FIND

/* count_nonzero: per-lane counters of the lane's width, which subtract the nonzero masks (-1) and
 * are added up into 64 bits before they could overflow (COUNT_PASS vectors, 1-byte lanes).  Along
 * columns (any, all and count_nonzero alike: the driver turns counts into any and all) a counter
 * per column of the tile, rows taken in order. */
enum { COUNT_PASS = 120 };

#define GP_COUNT(NAME, numpy_name, kind, size, host_type, device_type)                            \
    GP_INLINE uint64_t count_lanes_##NAME(const gp_mvec_##NAME *c, int vectors)                    \
    {                                                                                              \
        enum { L = GP_NATIVE_BYTES / size };                                                       \
        uint64_t total = 0;                                                                        \
        for (int i = 0; i < vectors; ++i)                                                          \
            for (int j = 0; j < L; ++j) total += (uint64_t)c[i][j];                                \
        return total;                                                                              \
    }                                                                                              \
    static void count_run_##NAME(const void *in, int64_t count, gp_partial *partial)              \
    {                                                                                              \
        enum { L = GP_NATIVE_BYTES / size };                                                       \
        const gp_lane_##NAME *x = in;                                                              \
        uint64_t total = 0;                                                                        \
        int64_t k = 0;                                                                             \
        while (k + 4 * L <= count) {                                                               \
            gp_mvec_##NAME c[4] = {{0}, {0}, {0}, {0}};                                            \
            for (int p = 0; p < COUNT_PASS && k + 4 * L <= count; ++p, k += 4 * L)                 \
                GP_UNROLL(4)                                                                       \
                for (int i = 0; i < 4; ++i) c[i] -= nonzero_mask_##NAME(GP_LOAD(gp_vec_##NAME, x + k + i * L)); \
            total += count_lanes_##NAME(c, 4);                                                     \
        }                                                                                          \
        gp_mvec_##NAME c = {0};                                                                    \
        for (; k < count; k += L) c -= nonzero_mask_##NAME(load_vec_part_##NAME(x + k, count - k, 0)); \
        partial->u = total + count_lanes_##NAME(&c, 1);                                            \
    }                                                                                              \
    static void count_columns_##NAME(const void *in, int64_t rows, int64_t stride, int64_t width,  \
                                     void *accumulator, int first)                                 \
    {                                                                                              \
        enum { L = GP_NATIVE_BYTES / size };                                                       \
        const gp_lane_##NAME *x = in;                                                              \
        uint64_t *acc = accumulator;                                                               \
        gp_mvec_##NAME c[GP_CPU_COLUMN_TILE / L];                                                  \
        const int64_t vectors = (width + L - 1) / L;                                               \
        if (first) memset(acc, 0, (size_t)width * sizeof *acc);                                    \
        for (int64_t r = 0; r < rows; r += COUNT_PASS) {                                           \
            const int64_t pass = rows - r < COUNT_PASS ? rows - r : COUNT_PASS;                    \
            memset(c, 0, (size_t)vectors * sizeof c[0]);                                           \
            for (int64_t p = 0; p < pass; ++p) {                                                   \
                const gp_lane_##NAME *row = x + (r + p) * stride;                                  \
                for (int64_t v = 0; v < vectors; ++v)                                              \
                    c[v] -= nonzero_mask_##NAME(load_vec_part_##NAME(row + v * L, width - v * L, 0)); \
            }                                                                                      \
            for (int64_t j = 0; j < width; ++j) acc[j] += (uint64_t)c[j / L][j % L];               \
        }                                                                                          \
    }
GP_DTYPES(GP_COUNT)
#undef GP_COUNT

/* argmin/argmax along columns (gp_arg_columns_fn): per lane the running best and, taken only when
 * strictly better (ties keep the earlier row), the new value; a lane that holds a NaN is closed, and
 * a NaN takes an open lane (the first NaN wins).  Rows go COLUMN_PASS at a time, each lane noting
 * the last row of the pass that improved it, which then goes to index[] (rarely, after the first
 * rows). */
#define GP_ARG_COLUMNS(NAME, kind, size, OP, BETTER, SKIP_NAN)                                     \
    static void arg_columns_##OP##_##NAME(const void *in, int64_t rows, int64_t stride, int64_t width, \
                                          void *values, int64_t *index)                            \
    {                                                                                              \
        enum { L = GP_NATIVE_BYTES / size };                                                       \
        const gp_lane_##NAME *x = in;                                                              \
        gp_lane_##NAME *best = values;                                                             \
        memcpy(best, x, (size_t)width * size);                                                     \
        for (int64_t j = 0; j < width; ++j) index[j] = 0;                                          \
        for (int64_t r = 1; r < rows; r += COLUMN_PASS) {                                          \
            const int64_t pass = rows - r < COLUMN_PASS ? rows - r : COLUMN_PASS;                  \
            for (int64_t j = 0; j < width; j += L) {                                               \
                const int64_t n = width - j;                                                       \
                gp_vec_##NAME a = load_vec_part_##NAME(best + j, n, best[j]);                      \
                ord_##NAME o = arg_order_##NAME(a);                                                \
                gp_mvec_##NAME open = ~nan_mask_##NAME(a); /* SKIP_NAN: lanes holding no number */ \
                if (SKIP_NAN) {                                                                    \
                    open = ~open;                                                                  \
                    a = GP_SELECT(gp_mvec_##NAME, open, GP_SPLAT(gp_vec_##NAME, nan_key_##NAME(OP_IS_MAX_##OP)), a); \
                    o = arg_order_##NAME(a);                                                       \
                }                                                                                  \
                gp_mvec_##NAME improved_at = GP_SPLAT(gp_mvec_##NAME, -1);                         \
                for (int64_t p = 0; p < pass; ++p) {                                               \
                    const gp_lane_##NAME *at = x + (r + p) * stride + j;                           \
                    gp_vec_##NAME v = load_vec_part_##NAME(at, n, at[0]);                          \
                    const gp_mvec_##NAME nan = nan_mask_##NAME(v);                                 \
                    if (SKIP_NAN) v = GP_SELECT(gp_mvec_##NAME, nan, GP_SPLAT(gp_vec_##NAME, nan_key_##NAME(OP_IS_MAX_##OP)), v); \
                    const ord_##NAME vo = arg_order_##NAME(v);                                     \
                    const gp_mvec_##NAME take = SKIP_NAN ? (gp_mvec_##NAME)BETTER(vo, o)           \
                                                         : open & (nan | (gp_mvec_##NAME)BETTER(vo, o)); \
                    a = GP_SELECT(gp_mvec_##NAME, take, v, a);                                     \
                    o = GP_SELECT(gp_mvec_##NAME, take, vo, o);                                    \
                    open &= SKIP_NAN ? nan : ~nan;                                                 \
                    improved_at = GP_SELECT(gp_mvec_##NAME, take, GP_SPLAT(gp_mvec_##NAME, p), improved_at); \
                }                                                                                  \
                if (SKIP_NAN) /* a lane that has seen no number keeps a NaN */                     \
                    a = GP_SELECT(gp_mvec_##NAME, open, GP_SPLAT(gp_vec_##NAME, nan_key_##NAME(-1)), a); \
                GP_STORE_PART(best + j, a, n);                                                     \
                const gp_mvec_##NAME improved = improved_at >= 0;                                  \
                if (!any_lane_set(&improved)) continue;                                            \
                for (int l = 0; l < L && l < n; ++l)                                               \
                    if (improved_at[l] >= 0) index[j + l] = r + improved_at[l];                    \
            }                                                                                      \
        }                                                                                          \
        if (SKIP_NAN) /* columns of NaNs: -1 */                                                    \
            for (int64_t j = 0; j < width; ++j)                                                    \
                if (is_nan_##NAME(best[j])) index[j] = -1;                                         \
    }

/* nanargmin's (max 0) and nanargmax's (1) key of a NaN, +inf and -inf, and (max -1) a NaN, as an
 * element (floats only: the integer tables have no NaN-skipping entries). */
#define GP_NAN_KEYS(NAME, numpy_name, kind, size, host_type, device_type)                         \
    GP_INLINE gp_lane_##NAME nan_key_##NAME(const int max)                                         \
    {                                                                                              \
        if (GP_IS_HALF(kind, size)) return (gp_lane_##NAME)(max < 0 ? 0x7e00 : max ? 0xfc00 : 0x7c00); \
        const double value = max < 0 ? __builtin_nan("") : max ? -__builtin_inf() : __builtin_inf(); \
        return kind == 'f' ? (gp_lane_##NAME)value : (gp_lane_##NAME)0;                            \
    }
GP_DTYPES(GP_NAN_KEYS)
#undef GP_NAN_KEYS
enum { OP_IS_MAX_min = 0, OP_IS_MAX_max = 1, OP_IS_MAX_nanmin = 0, OP_IS_MAX_nanmax = 1 };

/* argmin/argmax of `width` interleaved columns in one pass (gp_arg_run_fn), for elements of 4 and 8
 * bytes, whose flat indices fit lanes of their width, and width up to the lanes.  A vector's start
 * advances by S elements, the most whole rows of width that fit its L lanes (L itself when width
 * divides L), so that lane j always holds column j % width; its lanes past S read the next
 * vector's first elements again, with the same indices.  Per lane of ARG_VECTORS accumulators the
 * running best and, taken only when strictly better, its flat index; the accumulators start from
 * the first row (each lane from its column's element there), which also pads the tail, so a
 * padded lane never wins.  Then per column the best of its lanes, and the least index among the
 * lanes that hold it.  A NaN ends it with -1: the two passes then apply the NaN rules. */
enum { ARG_VECTORS = 4 };
#define GP_ARG_RUN(NAME, kind, size, OP, BETTER)                                                   \
    GP_INLINE int arg_run_of_##OP##_##NAME(const void *in, int64_t rows, const int width, int64_t *index) \
    {                                                                                              \
        enum { L = GP_NATIVE_BYTES / size, N = ARG_VECTORS };                                      \
        if (width > L) return -1;                                                                  \
        const int S = L - L % width;                                                               \
        const gp_lane_##NAME *x = in;                                                              \
        const int64_t count = rows * width;                                                        \
        gp_vec_##NAME best[N];                                                                     \
        gp_mvec_##NAME lane, first_at, at[N], next[N], nan = {0};                                  \
        /* Each lane's column's first element and its index, and below its best: splats for one    \
         * column, which GCC would otherwise build lane by lane. */                                \
        gp_vec_##NAME first_row = GP_SPLAT(gp_vec_##NAME, x[0]);                                   \
        GP_UNROLL(16)                                                                              \
        for (int j = 0; j < L; ++j) {                                                              \
            lane[j] = (gp_mask_##NAME)j;                                                           \
            first_at[j] = (gp_mask_##NAME)(j % width);                                             \
            if (width > 1) first_row[j] = x[j % width];                                            \
        }                                                                                          \
        GP_UNROLL(4)                                                                               \
        for (int i = 0; i < N; ++i) {                                                              \
            best[i] = first_row;                                                                   \
            at[i] = first_at;                                                                      \
            next[i] = lane + (gp_mask_##NAME)(i * S);                                              \
        }                                                                                          \
        int64_t k = 0;                                                                             \
        for (; k + (N - 1) * S + L <= count; k += N * S)                                           \
            GP_UNROLL(4)                                                                           \
            for (int i = 0; i < N; ++i) {                                                          \
                const gp_vec_##NAME v = GP_LOAD(gp_vec_##NAME, x + k + i * S);                      \
                if (kind == 'f') nan |= (gp_mvec_##NAME)(v != v);                                  \
                const gp_mvec_##NAME better = (gp_mvec_##NAME)BETTER(v, best[i]);                  \
                best[i] = GP_SELECT(gp_mvec_##NAME, better, v, best[i]);                           \
                at[i] = GP_SELECT(gp_mvec_##NAME, better, next[i], at[i]);                         \
                next[i] += (gp_mask_##NAME)(N * S);                                                \
            }                                                                                      \
        /* The rest, fewer than N vectors, one into each accumulator (their lanes have the same    \
         * columns); the last ends at the last element, overlapping the one before (its start a     \
         * multiple of width: a lane keeps its column, and an element seen twice has one index),    \
         * with S lanes read, or fewer for fewer elements in all. */                                \
        GP_UNROLL(4)                                                                               \
        for (int i = 0; i < N && k < count; ++i, k += S) {                                         \
            const int64_t from = count - k >= L ? k : count >= S ? count - S : 0;                  \
            const int64_t part = count - from; /* at least L, S at the last, or count */           \
            const gp_mvec_##NAME inside = lane < GP_SPLAT(gp_mvec_##NAME, part);                   \
            gp_vec_##NAME v = load_vec_part_##NAME(x + from, part, x[0]);                          \
            v = GP_SELECT(gp_mvec_##NAME, inside, v, first_row);                                  \
            if (kind == 'f') nan |= (gp_mvec_##NAME)(v != v);                                      \
            const gp_mvec_##NAME better = (gp_mvec_##NAME)BETTER(v, best[i]);                      \
            best[i] = GP_SELECT(gp_mvec_##NAME, better, v, best[i]);                               \
            at[i] = GP_SELECT(gp_mvec_##NAME, better, lane + (gp_mask_##NAME)from, at[i]);        \
            if (from != k) break;                                                                  \
        }                                                                                          \
        if (kind == 'f' && any_lane_set(&nan)) return -1;                                          \
        /* Each lane's best over the accumulators, the four pairwise; where width divides L, each  \
         * column's best in every lane of it, by butterflies (lane j with lane j ^ w, w from L / 2  \
         * down to width, stays on its column).  No NaN is left, and a tie takes either: equal      \
         * values.  Then per lane the least index of the accumulators that hold that best. */      \
        gp_vec_##NAME column_best = gp_vec_##OP(gp_vec_##OP(best[0], best[1]), gp_vec_##OP(best[2], best[3])); \
        GP_UNROLL(4)                                                                               \
        for (int w = L / 2; S == L && w >= width; w /= 2) column_best = gp_vec_##OP(column_best, GP_XOR_LANES(size, column_best, w)); \
        const gp_mvec_##NAME none = GP_SPLAT(gp_mvec_##NAME, ((uint64_t)1 << (8 * size - 1)) - 1);  \
        gp_mvec_##NAME first = none;                                                               \
        GP_UNROLL(4)                                                                               \
        for (int i = 0; i < N; ++i)                                                                \
            first = gp_vec_min(first, GP_SELECT(gp_mvec_##NAME, best[i] == column_best, at[i], none)); \
        if (S == L) { /* the least over a column's lanes, folded alike */                          \
            GP_UNROLL(4)                                                                           \
            for (int w = L / 2; w >= width; w /= 2) first = gp_vec_min(first, GP_XOR_LANES(size, first, w)); \
            for (int j = 0; j < width; ++j) index[j] = (int64_t)first[j] / width;                  \
            return 0;                                                                              \
        }                                                                                          \
        /* Otherwise a column's lanes are j, j + width, ...: one after another. */                 \
        for (int j = 0; j < width; ++j) {                                                          \
            gp_lane_##NAME value = column_best[j];                                                 \
            gp_mask_##NAME least = first[j];                                                       \
            for (int m = j + width; m < L; m += width)                                             \
                if (BETTER(column_best[m], value) || (column_best[m] == value && first[m] < least)) { \
                    value = column_best[m];                                                        \
                    least = first[m];                                                              \
                }                                                                                  \
            index[j] = (int64_t)least / width;                                                     \
        }                                                                                          \
        return 0;                                                                                  \
    }                                                                                              \
    /* A loop per column count: its lane patterns and folds constant. */                           \
    static int arg_run_##OP##_##NAME(const void *in, int64_t rows, int64_t width, int64_t *index)  \
    {                                                                                              \
        switch (width) {                                                                           \
        case 1: return arg_run_of_##OP##_##NAME(in, rows, 1, index);                               \
        case 2: return arg_run_of_##OP##_##NAME(in, rows, 2, index);                               \
        case 3: return arg_run_of_##OP##_##NAME(in, rows, 3, index);                               \
        case 4: return arg_run_of_##OP##_##NAME(in, rows, 4, index);                               \
        case 5: return arg_run_of_##OP##_##NAME(in, rows, 5, index);                               \
        case 6: return arg_run_of_##OP##_##NAME(in, rows, 6, index);                               \
        case 7: return arg_run_of_##OP##_##NAME(in, rows, 7, index);                               \
        case 8: return arg_run_of_##OP##_##NAME(in, rows, 8, index);                               \
        case 16: return arg_run_of_##OP##_##NAME(in, rows, 16, index);                             \
        default: return -1;                                                                        \
        }                                                                                          \
    }

/* Its arguments' code for elements of 4 and 8 bytes only (`size` a literal 1, 2, 4 or 8). */
#define GP_WIDE_ONLY(size, ...) GP_WIDE_ONLY_##size(__VA_ARGS__)
#define GP_WIDE_ONLY_1(...)
#define GP_WIDE_ONLY_2(...)
#define GP_WIDE_ONLY_4(...) __VA_ARGS__
#define GP_WIDE_ONLY_8(...) __VA_ARGS__

#define GP_ARG_KERNELS(NAME, numpy_name, kind, size, host_type, device_type)                      \
    GP_ARG_COLUMNS(NAME, kind, size, min, GP_LESS, 0)                                              \
    GP_ARG_COLUMNS(NAME, kind, size, max, GP_GREATER, 0)                                           \
    GP_ARG_COLUMNS(NAME, kind, size, nanmin, GP_LESS, 1)                                           \
    GP_ARG_COLUMNS(NAME, kind, size, nanmax, GP_GREATER, 1)                                        \
    GP_WIDE_ONLY(size, GP_ARG_RUN(NAME, kind, size, min, GP_LESS) GP_ARG_RUN(NAME, kind, size, max, GP_GREATER))
GP_DTYPES(GP_ARG_KERNELS)
#undef GP_ARG_KERNELS

/* ---- scans --------------------------------------------------------------------------------------- */

/* The window of (a, b) that starts `by` lanes before b (by < the lane count, a constant): b's lanes
 * moved up by `by`, a's last `by` lanes below them.  AVX-512's file brings its own
 * (GP_ISA_LANE_SHIFTS: VALIGND/VALIGNQ, where GCC builds a two-table permute with copies). */
#ifndef GP_ISA_LANE_SHIFTS
#if GP_NATIVE_BYTES == 64
GP_INLINE gp_f32v gp_window_f32(gp_f32v a, gp_f32v b, int by)
{
    switch (by) {
    case 1: return __builtin_shufflevector(a, b, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30);
    case 2: return __builtin_shufflevector(a, b, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29);
    case 4: return __builtin_shufflevector(a, b, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27);
    default: return __builtin_shufflevector(a, b, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23);
    }
}
GP_INLINE gp_u64v gp_window_u64(gp_u64v a, gp_u64v b, int by)
{
    switch (by) {
    case 1: return __builtin_shufflevector(a, b, 7, 8, 9, 10, 11, 12, 13, 14);
    case 2: return __builtin_shufflevector(a, b, 6, 7, 8, 9, 10, 11, 12, 13);
    default: return __builtin_shufflevector(a, b, 4, 5, 6, 7, 8, 9, 10, 11);
    }
}
#elif GP_NATIVE_BYTES == 32
GP_INLINE gp_f32v gp_window_f32(gp_f32v a, gp_f32v b, int by)
{
    switch (by) {
    case 1: return __builtin_shufflevector(a, b, 7, 8, 9, 10, 11, 12, 13, 14);
    case 2: return __builtin_shufflevector(a, b, 6, 7, 8, 9, 10, 11, 12, 13);
    default: return __builtin_shufflevector(a, b, 4, 5, 6, 7, 8, 9, 10, 11);
    }
}
GP_INLINE gp_u64v gp_window_u64(gp_u64v a, gp_u64v b, int by)
{
    switch (by) {
    case 1: return __builtin_shufflevector(a, b, 3, 4, 5, 6);
    default: return __builtin_shufflevector(a, b, 2, 3, 4, 5);
    }
}
#else
GP_INLINE gp_f32v gp_window_f32(gp_f32v a, gp_f32v b, int by)
{
    switch (by) {
    case 1: return __builtin_shufflevector(a, b, 3, 4, 5, 6);
    default: return __builtin_shufflevector(a, b, 2, 3, 4, 5);
    }
}
GP_INLINE gp_u64v gp_window_u64(gp_u64v a, gp_u64v b, int by)
{
    (void)by; /* only 1 */
    return __builtin_shufflevector(a, b, 1, 2);
}
#endif
#endif

/* The scans' operators (gp_op) on the lanes of each kind, with their identities: u64 (word lanes:
 * integer sums and products wrap; min and max compare as signed where `rule` says (gp_minmax_rule),
 * their values sign-extended), f64 and f32 (a NaN wins min and max, as in numpy.minimum/maximum; a
 * tie goes to b, the later element, or with `rule` (float16) to a).  `op` and `rule` are constants
 * in every loop, which is compiled per operator and dtype. */
GP_INLINE gp_u64v combine_u64(gp_u64v a, gp_u64v b, const gp_op op, const int rule)
{
    switch (op) {
    case GP_SUM: return a + b;
    case GP_PROD: return a * b;
    case GP_MIN: return GP_SELECT(gp_i64v, rule ? (gp_i64v)b < (gp_i64v)a : b < a, b, a);
    default: return GP_SELECT(gp_i64v, rule ? (gp_i64v)b > (gp_i64v)a : b > a, b, a);
    }
}
#define GP_FLOAT_COMBINE(TYPE, SUFFIX, MASK)                                                       \
    GP_INLINE TYPE combine_##SUFFIX(TYPE a, TYPE b, const gp_op op, const int rule)                \
    {                                                                                              \
        switch (op) {                                                                              \
        case GP_SUM: return a + b;                                                                 \
        case GP_PROD: return a * b;                                                                \
        case GP_MIN: return GP_SELECT(MASK, (a != a) | (a < b) | (rule ? a == b : a != a), a, b);  \
        default: return GP_SELECT(MASK, (a != a) | (a > b) | (rule ? a == b : a != a), a, b);      \
        }                                                                                          \
    }
GP_FLOAT_COMBINE(gp_f64v, f64, gp_i64v)
GP_FLOAT_COMBINE(gp_f32v, f32, gp_i32v)
#undef GP_FLOAT_COMBINE
GP_INLINE gp_u64v identity_u64(const gp_op op, const int rule)
{
    return GP_SPLAT(gp_u64v, gp_scan_identity(op, rule).u);
}
GP_INLINE gp_f64v identity_f64(const gp_op op, const int rule)
{
    return GP_SPLAT(gp_f64v, gp_scan_identity(op, rule).f);
}
GP_INLINE gp_f32v identity_f32(const gp_op op, const int rule)
{
    return GP_SPLAT(gp_f32v, (float)gp_scan_identity(op, rule).f);
}
/* What a NaN-skipping scan reads a NaN as: NumPy's nancumsum reads +0.0, not the identity (-0.0,
 * which would keep a run of NaNs and negative zeros negative); a product's identity, 1.  Integers
 * hold no NaN. */
GP_INLINE gp_u64v nan_as_u64(const gp_op op, const int rule) { return identity_u64(op, rule); }
GP_INLINE gp_f64v nan_as_f64(const gp_op op, const int rule)
{
    return op == GP_SUM ? GP_SPLAT(gp_f64v, 0.0) : identity_f64(op, rule);
}
GP_INLINE gp_f32v nan_as_f32(const gp_op op, const int rule)
{
    return op == GP_SUM ? GP_SPLAT(gp_f32v, 0.0f) : identity_f32(op, rule);
}

/* Logical vectors (GP_PARTS natives of LANES lanes) shifted up by `by` lanes (a constant: 1, 2, 4
 * or 8), z in the first `by` lanes; the in-register inclusive scans built from them (Hillis-Steele:
 * log2(lanes) shifted combinations, z being the operator's identity); the last lane in every
 * lane; rotated up by `by` lanes (the last `by` in the first); and spread: each lane combined with
 * the lanes width, 2 width ... before it, cyclically (width a constant power of two), so that the
 * lanes of a column (width apart) all hold the column's combination. */
#define GP_LOGICAL_SCAN(TYPE, SUFFIX, LANES, WINDOW_TYPE, WINDOW, LOGICAL_LANES)                   \
    GP_INLINE void lshift_##SUFFIX(TYPE *out, const TYPE *in, TYPE z, int by)                      \
    {                                                                                              \
        GP_UNROLL(16)                                                                              \
        for (int p = 0; p < GP_PARTS; ++p) {                                                       \
            if (by >= LANES) out[p] = p >= by / LANES ? in[p - by / LANES] : z;                    \
            else out[p] = (TYPE)WINDOW((WINDOW_TYPE)(p > 0 ? in[p - 1] : z), (WINDOW_TYPE)in[p], by); \
        }                                                                                          \
    }                                                                                              \
    GP_INLINE void lscan_step_##SUFFIX(TYPE *v, TYPE z, int by, const gp_op op, const int rule)    \
    {                                                                                              \
        TYPE shifted[GP_PARTS];                                                                    \
        lshift_##SUFFIX(shifted, v, z, by);                                                        \
        GP_UNROLL(16)                                                                              \
        for (int p = 0; p < GP_PARTS; ++p) v[p] = combine_##SUFFIX(shifted[p], v[p], op, rule);    \
    }                                                                                              \
    GP_INLINE void lscan_##SUFFIX(TYPE *v, TYPE z, const gp_op op, const int rule)                 \
    {                                                                                              \
        lscan_step_##SUFFIX(v, z, 1, op, rule);                                                    \
        lscan_step_##SUFFIX(v, z, 2, op, rule);                                                    \
        lscan_step_##SUFFIX(v, z, 4, op, rule);                                                    \
        if (LOGICAL_LANES > 8) lscan_step_##SUFFIX(v, z, 8, op, rule);                             \
    }                                                                                              \
    GP_INLINE TYPE llast_##SUFFIX(const TYPE *v)                                                   \
    {                                                                                              \
        return GP_SPLAT(TYPE, v[GP_PARTS - 1][LANES - 1]);                                         \
    }                                                                                              \
    GP_INLINE void lrotate_##SUFFIX(TYPE *out, const TYPE *in, int by)                             \
    {                                                                                              \
        GP_UNROLL(16)                                                                              \
        for (int p = 0; p < GP_PARTS; ++p) {                                                       \
            if (by >= LANES) out[p] = in[(p + GP_PARTS - by / LANES) % GP_PARTS];                  \
            else out[p] = (TYPE)WINDOW((WINDOW_TYPE)in[(p + GP_PARTS - 1) % GP_PARTS], (WINDOW_TYPE)in[p], by); \
        }                                                                                          \
    }                                                                                              \
    GP_INLINE void lspread_##SUFFIX(TYPE *v, int width, const gp_op op, const int rule)            \
    {                                                                                              \
        for (int by = width; by < LOGICAL_LANES; by *= 2) {                                        \
            TYPE rotated[GP_PARTS];                                                                \
            lrotate_##SUFFIX(rotated, v, by);                                                      \
            GP_UNROLL(16)                                                                          \
            for (int p = 0; p < GP_PARTS; ++p) v[p] = combine_##SUFFIX(v[p], rotated[p], op, rule); \
        }                                                                                          \
    }
GP_LOGICAL_SCAN(gp_f32v, f32, GP_NL32, gp_f32v, gp_window_f32, 16)
GP_LOGICAL_SCAN(gp_f64v, f64, GP_NL64, gp_u64v, gp_window_u64, 8)
GP_LOGICAL_SCAN(gp_u64v, u64, GP_NL64, gp_u64v, gp_window_u64, 8)
#undef GP_LOGICAL_SCAN

/* A piece's scan, a logical vector at a time: out = offset op the in-register scans, their last
 * lanes carried on; the piece's total (in double for the float kinds, whatever the lanes) comes out
 * as scan_total computes it: the logical vectors combined lane by lane, then the lanes by
 * lf64_fold or lu64_fold.  Kinds: word (64-bit words; the output 64-bit, or for min and max the
 * input's integer width), f64 (double; the output float64, or float32 for products), f32 (float
 * lanes; the output float32, or float16).  What differs between the kinds is below; GP_SCAN_KIND
 * writes the loops once. */

/* Part p of a logical vector r stored (its first n lanes) as elements of out_size bytes. */
GP_INLINE void word_scan_store(void *out, int p, gp_u64v r, int64_t n, int out_size)
{
    switch (out_size) {
    case 1: GP_STORE_PART((uint8_t *)out + p * GP_NL64, __builtin_convertvector(r, gp_u8e), n); break;
    case 2: GP_STORE_PART((uint16_t *)out + p * GP_NL64, __builtin_convertvector(r, gp_u16q), n); break;
    case 4: GP_STORE_PART((uint32_t *)out + p * GP_NL64, __builtin_convertvector(r, gp_u32h), n); break;
    default: GP_STORE_PART((uint64_t *)out + p * GP_NL64, r, n); break;
    }
}
GP_INLINE void f64_scan_store(void *out, int p, gp_f64v r, int64_t n, int out_size)
{
    if (out_size == 4) GP_STORE_PART((float *)out + p * GP_NL64, __builtin_convertvector(r, gp_f32h), n);
    else GP_STORE_PART((double *)out + p * GP_NL64, r, n);
}
GP_INLINE void f32_scan_store(void *out, int p, gp_f32v r, int64_t n, int out_size)
{
    if (out_size == 2) GP_STORE_PART((uint16_t *)out + p * GP_NL32, f32_to_half(r), n);
    else GP_STORE_PART((float *)out + p * GP_NL32, r, n);
}
/* An offset or total (gp_partial: a word, or a double for the float kinds) as a lane, and back. */
GP_INLINE uint64_t word_scan_lane(const gp_partial *offset) { return offset->u; }
GP_INLINE double f64_scan_lane(const gp_partial *offset) { return offset->f; }
GP_INLINE float f32_scan_lane(const gp_partial *offset) { return (float)offset->f; }
GP_INLINE void word_scan_partial(gp_partial *total, uint64_t lane) { total->u = lane; }
GP_INLINE void f64_scan_partial(gp_partial *total, double lane) { total->f = lane; }
GP_INLINE void f32_scan_partial(gp_partial *total, float lane) { total->f = lane; }
GP_INLINE gp_u64v word_scan_carry(const gp_partial *offset) { return GP_SPLAT(gp_u64v, word_scan_lane(offset)); }
GP_INLINE gp_f64v f64_scan_carry(const gp_partial *offset) { return GP_SPLAT(gp_f64v, f64_scan_lane(offset)); }
GP_INLINE gp_f32v f32_scan_carry(const gp_partial *offset) { return GP_SPLAT(gp_f32v, f32_scan_lane(offset)); }

/* The total's lanes: combined with a logical vector (float lanes: the low and high 8 of it, in
 * double), and folded. */
GP_INLINE void word_scan_total_add(gp_u64v *t, const gp_u64v *v, const gp_op op, const int rule)
{
    GP_UNROLL(16)
    for (int p = 0; p < GP_PARTS; ++p) t[p] = combine_u64(t[p], v[p], op, rule);
}
GP_INLINE void f64_scan_total_add(gp_f64v *t, const gp_f64v *v, const gp_op op, const int rule)
{
    GP_UNROLL(16)
    for (int p = 0; p < GP_PARTS; ++p) t[p] = combine_f64(t[p], v[p], op, rule);
}
GP_INLINE void f32_scan_total_add(gp_f64v *t, const gp_f32v *v, const gp_op op, const int rule)
{
    gp_f64v wide[2 * GP_PARTS];
    GP_UNROLL(16)
    for (int p = 0; p < GP_PARTS; ++p) {
        wide[2 * p] = gp_low_f64(v[p]);
        wide[2 * p + 1] = gp_high_f64(v[p]);
    }
    GP_UNROLL(16)
    for (int p = 0; p < GP_PARTS; ++p)
        t[p] = combine_f64(t[p], combine_f64(wide[p], wide[GP_PARTS + p], op, rule), op, rule);
}
GP_INLINE void word_scan_total_end(const gp_u64v *t, gp_partial *total, const gp_op op, const int rule)
{
    total->u = lu64_fold(t, op, rule);
}
GP_INLINE void f64_scan_total_end(const gp_f64v *t, gp_partial *total, const gp_op op, const int rule)
{
    (void)rule;
    total->f = lf64_fold(t, op);
}
#define f32_scan_total_end f64_scan_total_end

/* Whether any order of combination gives the same values (words), which the narrow columns use. */
enum { word_scan_exact = 1, f64_scan_exact = 0, f32_scan_exact = 0 };
/* Whether the kind's lanes are floats, whose min and max may tie on zeros of two signs. */
enum { word_scan_float = 0, f64_scan_float = 1, f32_scan_float = 1 };

/* Whether a float sum's or product's outputs may hold an inf or NaN (fp_errors.c then looks, and
 * settles them), found at no cost a vector: an inf or NaN in the input or the offset leaves the
 * carried running value so for good, which is looked at once, after the loop; one the loop makes
 * from finite values raises the thread's overflow or invalid flag (fp_status.h).  Only a float16
 * output's rounding is looked for in the loop: it is inf from 65520 up (halfway to 2^16, which
 * rounding to even picks), which f32_to_half does not flag.  (Before, every output was probed: a
 * fused multiply-add a vector, which left float64 scans 4-14 % slower; perf-notes.)  Words have
 * no such values. */
typedef gp_i64v word_scan_mask; /* the lanes of a float16 output that rounded to inf */
typedef gp_i64v f64_scan_mask;
typedef gp_i32v f32_scan_mask;
GP_INLINE unsigned word_scan_watch_begin(const gp_op op)
{
    (void)op;
    return 0;
}
GP_INLINE unsigned f64_scan_watch_begin(const gp_op op)
{
    return op == GP_SUM || op == GP_PROD ? gp_fp_watch_begin() : 0;
}
#define f32_scan_watch_begin f64_scan_watch_begin
#define GP_SCAN_NO_HALF(PREFIX, VEC)                                                               \
    GP_INLINE void PREFIX##_scan_half_check(PREFIX##_scan_mask *rounded_inf, VEC r, int out_size)  \
    {                                                                                              \
        (void)rounded_inf;                                                                         \
        (void)r;                                                                                   \
        (void)out_size;                                                                            \
    }
GP_SCAN_NO_HALF(word, gp_u64v)
GP_SCAN_NO_HALF(f64, gp_f64v)
#undef GP_SCAN_NO_HALF
GP_INLINE void f32_scan_half_check(f32_scan_mask *rounded_inf, gp_f32v r, int out_size)
{
    if (out_size == 2) *rounded_inf |= (r >= 65520.0f) | (r <= -65520.0f);
}
/* After the loop: whether the flags were raised, one of `count` running values is inf or NaN, or a
 * float16 output rounded to inf. */
GP_INLINE int word_scan_watch_end(unsigned before, const void *running, int64_t count, word_scan_mask rounded_inf,
                                  const gp_op op)
{
    (void)before;
    (void)running;
    (void)count;
    (void)rounded_inf;
    (void)op;
    return 0;
}
#define GP_SCAN_WATCH_END(PREFIX, VEC)                                                             \
    GP_INLINE int PREFIX##_scan_watch_end(unsigned before, const void *running, int64_t count,     \
                                          PREFIX##_scan_mask rounded_inf, const gp_op op)          \
    {                                                                                              \
        if (op != GP_SUM && op != GP_PROD) return 0;                                               \
        int found = gp_fp_watch_end(before);                                                       \
        const __typeof__(((VEC){0})[0]) *value = running;                                          \
        for (int64_t j = 0; j < count; ++j) found |= !__builtin_isfinite(value[j]);                \
        for (size_t j = 0; j < sizeof rounded_inf / sizeof rounded_inf[0]; ++j) found |= rounded_inf[j] != 0; \
        return found;                                                                              \
    }
GP_SCAN_WATCH_END(f64, gp_f64v)
GP_SCAN_WATCH_END(f32, gp_f32v)
#undef GP_SCAN_WATCH_END

/* The scan loops of one kind for one dtype: PREFIX the kind, VEC its lanes' native vector and
 * SUFFIX their operators (combine_SUFFIX, identity_SUFFIX) and logical scans (lscan_SUFFIX ...), NL
 * lanes a native vector and LOGICAL a logical one, TVEC the total's (TSUFFIX its identity), LANES(x,
 * n) the dtype's first n elements of a native vector.  Loaded lanes past n become the identity; with
 * skip_nan, NaN lanes too.  RULE: min and max's gp_minmax_rule for the dtype. */
#define GP_SCAN_KIND(NAME, PREFIX, VEC, SUFFIX, NL, LOGICAL, TVEC, TSUFFIX, LANES, RULE)           \
    GP_INLINE void PREFIX##_scan_load_##NAME(const gp_lane_##NAME *x, int64_t n, VEC *v, const gp_op op, \
                                             const int skip_nan)                                   \
    {                                                                                              \
        const VEC identity = identity_##SUFFIX(op, RULE), nan_as = nan_as_##SUFFIX(op, RULE);      \
        GP_UNROLL(16)                                                                              \
        for (int p = 0; p < GP_PARTS; ++p) {                                                       \
            const int64_t m = n - p * NL;                                                          \
            v[p] = LANES(x + p * NL, m);                                                           \
            if (skip_nan) v[p] = GP_SELECT(__typeof__(v[p] != v[p]), v[p] != v[p], nan_as, v[p]);  \
            if (m < NL)                                                                            \
                for (int j = m > 0 ? (int)m : 0; j < NL; ++j) v[p][j] = identity[j];               \
        }                                                                                          \
    }                                                                                              \
    GP_INLINE void PREFIX##_scan_step_##NAME(const gp_lane_##NAME *x, int64_t n, void *out, const int exclusive, \
                                             int out_size, VEC *carry, TVEC *t, PREFIX##_scan_mask *rounded_inf, \
                                             const gp_op op, const int skip_nan)                   \
    {                                                                                              \
        const VEC identity = identity_##SUFFIX(op, RULE);                                          \
        VEC v[GP_PARTS], s[GP_PARTS], shifted[GP_PARTS];                                           \
        PREFIX##_scan_load_##NAME(x, n, v, op, skip_nan);                                          \
        memcpy(s, v, sizeof s);                                                                    \
        lscan_##SUFFIX(s, identity, op, RULE);                                                     \
        if (exclusive) lshift_##SUFFIX(shifted, s, identity, 1);                                   \
        const VEC last = llast_##SUFFIX(s);                                                        \
        GP_UNROLL(16)                                                                              \
        for (int p = 0; p < GP_PARTS; ++p) {                                                       \
            const VEC r = combine_##SUFFIX(*carry, exclusive ? shifted[p] : s[p], op, RULE);       \
            PREFIX##_scan_store(out, p, r, n - p * NL, out_size);                                  \
            PREFIX##_scan_half_check(rounded_inf, r, out_size);                                    \
        }                                                                                          \
        if (t != NULL) PREFIX##_scan_total_add(t, v, op, RULE);                                    \
        *carry = combine_##SUFFIX(*carry, last, op, RULE);                                         \
    }                                                                                              \
    /* A float min's or max's total of x[0, count) that is a zero: the lanes' fold kept some       \
     * zero's sign, NumPy's accumulate keeps the last one's (a tie goes to the later element;      \
     * float16's, RULE, the first one's); a search for it, only for a total of zero. */            \
    GP_INLINE void PREFIX##_scan_total_zero_##NAME(const gp_lane_##NAME *x, int64_t count, gp_partial *total, \
                                                   const gp_op op)                                 \
    {                                                                                              \
        if (!PREFIX##_scan_float || (op != GP_MIN && op != GP_MAX) || total->f != 0.0) return;     \
        for (int64_t k = 0; k < count; ++k) {                                                      \
            const double value = (double)LANES(x + (RULE ? k : count - 1 - k), 1)[0];              \
            if (value == 0.0) {                                                                    \
                total->f = value;                                                                  \
                return;                                                                            \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    GP_INLINE void PREFIX##_scan_total_##NAME(const void *in, int64_t count, gp_partial *total, const gp_op op, \
                                              const int skip_nan)                                  \
    {                                                                                              \
        const gp_lane_##NAME *x = in;                                                              \
        VEC v[GP_PARTS];                                                                           \
        TVEC t[GP_PARTS];                                                                          \
        GP_UNROLL(16)                                                                              \
        for (int p = 0; p < GP_PARTS; ++p) t[p] = identity_##TSUFFIX(op, RULE);                    \
        for (int64_t k = 0; k < count; k += LOGICAL) {                                             \
            PREFIX##_scan_load_##NAME(x + k, count - k, v, op, skip_nan);                          \
            PREFIX##_scan_total_add(t, v, op, RULE);                                               \
        }                                                                                          \
        PREFIX##_scan_total_end(t, total, op, RULE);                                               \
        PREFIX##_scan_total_zero_##NAME(x, count, total, op);                                      \
    }                                                                                              \
    GP_INLINE void PREFIX##_scan_body_##NAME(const void *in, int64_t count, void *out, const int exclusive, \
                                             int out_size, const gp_partial *offset, gp_partial *total, \
                                             int *non_finite, const gp_op op, const int skip_nan)  \
    {                                                                                              \
        const gp_lane_##NAME *x = in;                                                              \
        const unsigned watch = PREFIX##_scan_watch_begin(op);                                      \
        VEC carry = PREFIX##_scan_carry(offset);                                                   \
        PREFIX##_scan_mask rounded_inf = {0};                                                      \
        TVEC t[GP_PARTS];                                                                          \
        GP_UNROLL(16)                                                                              \
        for (int p = 0; p < GP_PARTS; ++p) t[p] = identity_##TSUFFIX(op, RULE);                    \
        TVEC *const kept = total != NULL ? t : NULL;                                               \
        int64_t k = 0;                                                                             \
        for (; k + LOGICAL <= count; k += LOGICAL)                                                 \
            PREFIX##_scan_step_##NAME(x + k, LOGICAL, (char *)out + k * out_size, exclusive, out_size, &carry, \
                                      kept, &rounded_inf, op, skip_nan);                           \
        if (k < count)                                                                             \
            PREFIX##_scan_step_##NAME(x + k, count - k, (char *)out + k * out_size, exclusive, out_size, &carry, \
                                      kept, &rounded_inf, op, skip_nan);                           \
        if (total != NULL) {                                                                       \
            PREFIX##_scan_total_end(t, total, op, RULE);                                           \
            PREFIX##_scan_total_zero_##NAME(x, count, total, op);                                  \
        }                                                                                          \
        if (PREFIX##_scan_watch_end(watch, &carry, 1, rounded_inf, op)) *non_finite = 1;           \
    }                                                                                              \
    /* the run loop: `exclusive` and whether the total is wanted constants in the body, so that    \
     * their tests leave the loop (a float32 total costs four operations a vector, and only a lone \
     * thread's pieces before a row's last want it) */                                             \
    GP_INLINE void PREFIX##_scan_run_##NAME(const void *in, int64_t count, void *out, int exclusive, int out_size, \
                                            const gp_partial *offset, gp_partial *total, int *non_finite, \
                                            const gp_op op, const int skip_nan)                    \
    {                                                                                              \
        if (exclusive && total != NULL)                                                            \
            PREFIX##_scan_body_##NAME(in, count, out, 1, out_size, offset, total, non_finite, op, skip_nan); \
        else if (exclusive)                                                                        \
            PREFIX##_scan_body_##NAME(in, count, out, 1, out_size, offset, NULL, non_finite, op, skip_nan); \
        else if (total != NULL)                                                                    \
            PREFIX##_scan_body_##NAME(in, count, out, 0, out_size, offset, total, non_finite, op, skip_nan); \
        else PREFIX##_scan_body_##NAME(in, count, out, 0, out_size, offset, NULL, non_finite, op, skip_nan); \
    }                                                                                              \
    /* Along columns, each column scanned on its own, in row order.  A row's running values come   \
     * from `from` (width slots of the kind's type) and, where keep is not NULL, go back there.  The \
     * step takes n columns; the row passes whole vectors as the constant NL, so that their loads and \
     * stores need no temporaries (with a run-time n the step kept four stack copies a vector:     \
     * 0.5-0.7 ns an element). */                                                                  \
    GP_INLINE void PREFIX##_scan_column_step_##NAME(const gp_lane_##NAME *x, int64_t n, const void *from, \
                                                    void *keep, char *out, int exclusive, int out_size, \
                                                    PREFIX##_scan_mask *rounded_inf,               \
                                                    const gp_op op, const int skip_nan)            \
    {                                                                                              \
        const __typeof__(((VEC){0})[0]) *running = from;                                           \
        VEC a = identity_##SUFFIX(op, RULE), v = LANES(x, n);                                      \
        if (n >= NL) memcpy(&a, running, sizeof a);                                                \
        else if (n > 0) memcpy(&a, running, (size_t)n * sizeof running[0]);                       \
        if (skip_nan) v = GP_SELECT(__typeof__(v != v), v != v, nan_as_##SUFFIX(op, RULE), v);     \
        const VEC b = combine_##SUFFIX(a, v, op, RULE);                                            \
        if (keep != NULL) GP_STORE_PART((__typeof__(((VEC){0})[0]) *)keep, b, n);                  \
        PREFIX##_scan_store(out, 0, exclusive ? a : b, n, out_size);                               \
        PREFIX##_scan_half_check(rounded_inf, exclusive ? a : b, out_size);                        \
    }                                                                                              \
    GP_INLINE void PREFIX##_scan_column_row_##NAME(const gp_lane_##NAME *row, char *out_row, int64_t width, \
                                                   const void *from, void *keep, int exclusive, int out_size, \
                                                   PREFIX##_scan_mask *rounded_inf, const gp_op op, \
                                                   const int skip_nan)                             \
    {                                                                                              \
        __typeof__(((VEC){0})[0]) *const kept = keep;                                              \
        const __typeof__(((VEC){0})[0]) *const running = from;                                     \
        int64_t j = 0;                                                                             \
        for (; j + NL <= width; j += NL)                                                           \
            PREFIX##_scan_column_step_##NAME(row + j, NL, running + j, kept != NULL ? kept + j : NULL, \
                                             out_row + j * out_size, exclusive, out_size, rounded_inf, op, skip_nan); \
        if (j < width)                                                                             \
            PREFIX##_scan_column_step_##NAME(row + j, width - j, running + j, kept != NULL ? kept + j : NULL, \
                                             out_row + j * out_size, exclusive, out_size, rounded_inf, op, skip_nan); \
    }                                                                                              \
    /* acc (width slots of the kind's type) holds each column's running value, which `first` sets to\
     * the identity (an exclusive sum's +0, so that its first output is +0).  Where an inclusive   \
     * scan's outputs are of the kind's type they are the running values: every row after the first\
     * reads the row before's outputs, and acc is not written (one store a vector instead of two:  \
     * cumsum of 256 x 256 float64 along axis 0 on one thread of the 16-core H200 host, 37 -> 21 us;\
     * perf-notes). */                                                                             \
    GP_INLINE void PREFIX##_scan_columns_##NAME(const void *in, int64_t rows, int64_t stride, void *out, \
                                                int64_t width, void *accumulator, int first, int exclusive, \
                                                int out_size, int *non_finite, const gp_op op,     \
                                                const int skip_nan)                                \
    {                                                                                              \
        __typeof__(((VEC){0})[0]) *acc = accumulator;                                              \
        const VEC identity = identity_##SUFFIX(op, RULE);                                          \
        const unsigned watch = PREFIX##_scan_watch_begin(op);                                      \
        PREFIX##_scan_mask rounded_inf = {0};                                                      \
        const int64_t out_stride = stride * out_size;                                              \
        const int outputs_run = !exclusive && out_size == (int)sizeof acc[0] && rows > 0;          \
        if (first)                                                                                 \
            for (int64_t j = 0; j < width; ++j) acc[j] = op == GP_SUM && exclusive ? 0 : identity[0]; \
        for (int64_t r = 0; r < rows; ++r) {                                                       \
            const gp_lane_##NAME *row = (const gp_lane_##NAME *)in + r * stride;                   \
            char *out_row = (char *)out + r * out_stride;                                          \
            if (outputs_run)                                                                       \
                PREFIX##_scan_column_row_##NAME(row, out_row, width, r > 0 ? out_row - out_stride : (char *)acc, \
                                                NULL, 0, out_size, &rounded_inf, op, skip_nan);    \
            else                                                                                   \
                PREFIX##_scan_column_row_##NAME(row, out_row, width, acc, acc, exclusive, out_size, &rounded_inf, op, \
                                                skip_nan);                                         \
        }                                                                                          \
        const void *running = outputs_run ? (char *)out + (rows - 1) * out_stride : (char *)acc;   \
        if (PREFIX##_scan_watch_end(watch, running, width, rounded_inf, op)) *non_finite = 1;      \
    }                                                                                              \
    /* Narrow columns: a row of `width` columns is V logical vectors (width <= V * LOGICAL) read   \
     * from its start, the lanes past the width taken as the identity.  Rows whose V vectors lie in \
     * the block (WHOLE) are read whole, and their first STORE lanes stored (a constant: the power \
     * of two that holds the width, so that a store is one instruction; 0 where out is the input:  \
     * the width): the lanes past the width land on the next rows, whose stores come later.  Rows  \
     * first .. last of a block; running values in run, the totals' in total (NULL: none), both    \
     * kept in registers meanwhile (through the pointer, a float32 total's store and reload took 10 \
     * cycles a row). */                                                                           \
    GP_INLINE void PREFIX##_scan_narrow_rows_##NAME(const gp_lane_##NAME *x, int64_t first, int64_t last, \
                                                    int64_t width, char *out, const int exclusive, int out_size, \
                                                    VEC *run, VEC *total, const PREFIX##_scan_mask *inside, \
                                                    PREFIX##_scan_mask *rounded_inf, const gp_op op, \
                                                    const int skip_nan, const int V, const int WHOLE, const int STORE) \
    {                                                                                              \
        const VEC identity = identity_##SUFFIX(op, RULE), nan_as = nan_as_##SUFFIX(op, RULE);      \
        VEC running[2 * GP_PARTS], sums[2 * GP_PARTS];                                             \
        memcpy(running, run, sizeof running);                                                      \
        if (total != NULL) memcpy(sums, total, sizeof sums);                                       \
        for (int64_t r = first; r < last; ++r) {                                                   \
            const gp_lane_##NAME *row = x + r * width;                                             \
            char *out_row = out + r * width * out_size;                                            \
            GP_UNROLL(16)                                                                          \
            for (int p = 0; p < V * GP_PARTS; ++p) {                                               \
                VEC v = LANES(row + p * NL, WHOLE ? NL : width - p * NL);                          \
                if (skip_nan) v = GP_SELECT(__typeof__(v != v), v != v, nan_as, v);                \
                v = GP_SELECT(PREFIX##_scan_mask, inside[p], v, identity);                         \
                if (total != NULL) sums[p] = combine_##SUFFIX(sums[p], v, op, RULE);               \
                if (out == NULL) continue;                                                         \
                const VEC before = running[p];                                                     \
                running[p] = combine_##SUFFIX(running[p], v, op, RULE);                            \
                const VEC result = exclusive ? before : running[p];                                \
                PREFIX##_scan_store(out_row, p, result, (WHOLE && STORE ? STORE : width) - p * NL, out_size); \
                PREFIX##_scan_half_check(rounded_inf, result, out_size);                           \
            }                                                                                      \
        }                                                                                          \
        memcpy(run, running, sizeof running);                                                      \
        if (total != NULL) memcpy(total, sums, sizeof sums);                                       \
    }                                                                                              \
    /* Narrow columns of the exact kind (words: any order of combination gives the same values) \
     * whose width W (2 or 4, a constant) divides the logical vector: it holds LOGICAL / W whole   \
     * rows, scanned in the register (combinations W, 2 W ... lanes apart) and combined with the   \
     * running values (each column's in each of its lanes).  Those then grow by the vector's column \
     * totals, spread apart from them, so that one combination a vector waits on the one before.   \
     * Rows first .. last, a multiple of LOGICAL / W of them; run and total as in the row loop. */ \
    GP_INLINE void PREFIX##_scan_narrow_packed_##NAME(const gp_lane_##NAME *x, int64_t first, int64_t last, \
                                                      char *out, const int exclusive, int out_size, VEC *run, \
                                                      VEC *total, const PREFIX##_scan_mask *inside, \
                                                      const gp_op op, const int skip_nan, const int W) \
    {                                                                                              \
        const VEC identity = identity_##SUFFIX(op, RULE), nan_as = nan_as_##SUFFIX(op, RULE);      \
        VEC carry[GP_PARTS], sums[GP_PARTS];                                                       \
        GP_UNROLL(16)                                                                              \
        for (int p = 0; p < GP_PARTS; ++p) {                                                       \
            carry[p] = GP_SELECT(PREFIX##_scan_mask, inside[p], run[p], identity);                 \
            sums[p] = identity;                                                                    \
        }                                                                                          \
        lspread_##SUFFIX(carry, W, op, RULE);                                                      \
        for (int64_t r = first; r < last; r += LOGICAL / W) {                                      \
            VEC v[GP_PARTS], scanned[GP_PARTS], outputs[GP_PARTS], totals[GP_PARTS];               \
            GP_UNROLL(16)                                                                          \
            for (int p = 0; p < GP_PARTS; ++p) {                                                   \
                v[p] = LANES(x + r * W + p * NL, NL);                                              \
                if (skip_nan) v[p] = GP_SELECT(__typeof__(v[p] != v[p]), v[p] != v[p], nan_as, v[p]); \
                if (total != NULL) sums[p] = combine_##SUFFIX(sums[p], v[p], op, RULE);            \
            }                                                                                      \
            if (out == NULL) continue;                                                             \
            memcpy(scanned, v, sizeof scanned);                                                    \
            for (int by = W; by < LOGICAL; by *= 2) lscan_step_##SUFFIX(scanned, identity, by, op, RULE); \
            if (exclusive) lshift_##SUFFIX(outputs, scanned, identity, W);                         \
            else memcpy(outputs, scanned, sizeof outputs);                                         \
            memcpy(totals, v, sizeof totals);                                                      \
            lspread_##SUFFIX(totals, W, op, RULE);                                                 \
            GP_UNROLL(16)                                                                          \
            for (int p = 0; p < GP_PARTS; ++p) {                                                   \
                const VEC result = combine_##SUFFIX(carry[p], outputs[p], op, RULE);               \
                PREFIX##_scan_store(out + r * W * out_size, p, result, NL, out_size);              \
                carry[p] = combine_##SUFFIX(carry[p], totals[p], op, RULE);                        \
            }                                                                                      \
        }                                                                                          \
        if (total != NULL) lspread_##SUFFIX(sums, W, op, RULE);                                    \
        GP_UNROLL(16)                                                                              \
        for (int p = 0; p < GP_PARTS; ++p) {                                                       \
            run[p] = GP_SELECT(PREFIX##_scan_mask, inside[p], carry[p], identity);                 \
            if (total != NULL)                                                                     \
                total[p] = combine_##SUFFIX(total[p], GP_SELECT(PREFIX##_scan_mask, inside[p], sums[p], identity), \
                                            op, RULE);                                             \
        }                                                                                          \
    }                                                                                              \
    GP_INLINE void PREFIX##_scan_narrow_body_##NAME(const gp_lane_##NAME *x, int64_t rows, int64_t width, char *out, \
                                                    const int exclusive, int out_size, const gp_partial *offsets, \
                                                    gp_partial *totals, int *non_finite, const gp_op op, \
                                                    const int skip_nan, const int V, const int STORE, \
                                                    const int PACKED)                              \
    {                                                                                              \
        /* the width hidden from the compiler: where the dispatch leaves it one value (3, between  \
         * the packed 2 and 4), GCC 12 kept the running values on the stack for that constant's    \
         * stores, a reload a row (16384 x 3 int32, one thread: 19 -> 46 us; perf-notes) */        \
        __asm__("" : "+g"(width));                                                                 \
        typedef __typeof__(((VEC){0})[0]) lane_type;                                               \
        const VEC identity = identity_##SUFFIX(op, RULE);                                          \
        lane_type lanes[2 * LOGICAL];                                                              \
        VEC run[2 * GP_PARTS], total[2 * GP_PARTS];                                                \
        PREFIX##_scan_mask inside[2 * GP_PARTS];                                                   \
        for (int j = 0; j < 2 * LOGICAL; ++j)                                                      \
            lanes[j] = j < width && out != NULL ? PREFIX##_scan_lane(&offsets[j]) : identity[0];   \
        memcpy(run, lanes, sizeof run);                                                            \
        for (int p = 0; p < 2 * GP_PARTS; ++p) {                                                   \
            total[p] = identity;                                                                   \
            for (int j = 0; j < NL; ++j) inside[p][j] = p * NL + j < width ? -1 : 0;               \
        }                                                                                          \
        const unsigned watch = PREFIX##_scan_watch_begin(op);                                      \
        PREFIX##_scan_mask rounded_inf = {0};                                                      \
        const int64_t span = V * LOGICAL;                                                          \
        const int64_t whole = PACKED ? rows - rows % (LOGICAL / PACKED)                            \
                              : rows * width < span ? 0 : (rows * width - span) / width + 1;       \
        VEC *const kept = totals != NULL ? total : NULL;                                           \
        if (PACKED)                                                                                \
            PREFIX##_scan_narrow_packed_##NAME(x, 0, whole, out, exclusive, out_size, run, kept, inside, op, \
                                               skip_nan, PACKED);                                  \
        else if ((const void *)out == (const void *)x) /* in place: the next rows' elements not stored over */ \
            PREFIX##_scan_narrow_rows_##NAME(x, 0, whole, width, out, exclusive, out_size, run, kept, inside, \
                                             &rounded_inf, op, skip_nan, V, 1, 0);                 \
        else                                                                                       \
            PREFIX##_scan_narrow_rows_##NAME(x, 0, whole, width, out, exclusive, out_size, run, kept, inside, \
                                             &rounded_inf, op, skip_nan, V, 1, STORE);             \
        PREFIX##_scan_narrow_rows_##NAME(x, whole, rows, width, out, exclusive, out_size, run, kept, inside, \
                                         &rounded_inf, op, skip_nan, V, 0, STORE);                 \
        if (totals != NULL) {                                                                      \
            memcpy(lanes, total, sizeof lanes);                                                    \
            for (int64_t j = 0; j < width; ++j) PREFIX##_scan_partial(&totals[j], lanes[j]);       \
        }                                                                                          \
        if (PREFIX##_scan_watch_end(watch, run, width, rounded_inf, op)) *non_finite = 1;          \
    }                                                                                              \
    /* (rows of 32 bytes, out 16 bytes past a cache line as NumPy's large arrays are: 64-byte     \
     * stores 2.56 ns a row, 32-byte ones 1.28; rows of 16 bytes: 1.48 and 0.90 for 16-byte ones;  \
     * a C loop on the 2-core Zen 4 host, perf-notes) */                                           \
    GP_INLINE void PREFIX##_scan_narrow_##NAME(const void *in, int64_t rows, int64_t width, void *out, int exclusive, \
                                               int out_size, const gp_partial *offsets, gp_partial *totals, \
                                               int *non_finite, const gp_op op, const int skip_nan) \
    {                                                                                              \
        if (PREFIX##_scan_exact && width == 2)                                                     \
            PREFIX##_scan_narrow_body_##NAME(in, rows, width, out, exclusive, out_size, offsets, totals, non_finite, \
                                             op, skip_nan, 1, 2, 2);                               \
        else if (PREFIX##_scan_exact && width == 4)                                                \
            PREFIX##_scan_narrow_body_##NAME(in, rows, width, out, exclusive, out_size, offsets, totals, non_finite, \
                                             op, skip_nan, 1, 4, 4);                               \
        else if (LOGICAL < GP_CPU_NARROW_COLUMNS && width > LOGICAL)                               \
            PREFIX##_scan_narrow_body_##NAME(in, rows, width, out, exclusive, out_size, offsets, totals, non_finite, \
                                             op, skip_nan, 2, 2 * LOGICAL, 0);                     \
        else if (width <= 2)                                                                       \
            PREFIX##_scan_narrow_body_##NAME(in, rows, width, out, exclusive, out_size, offsets, totals, non_finite, \
                                             op, skip_nan, 1, 2, 0);                               \
        else if (width <= 4)                                                                       \
            PREFIX##_scan_narrow_body_##NAME(in, rows, width, out, exclusive, out_size, offsets, totals, non_finite, \
                                             op, skip_nan, 1, 4, 0);                               \
        else if (LOGICAL > 8 && width <= 8)                                                        \
            PREFIX##_scan_narrow_body_##NAME(in, rows, width, out, exclusive, out_size, offsets, totals, non_finite, \
                                             op, skip_nan, 1, 8, 0);                               \
        else                                                                                       \
            PREFIX##_scan_narrow_body_##NAME(in, rows, width, out, exclusive, out_size, offsets, totals, non_finite, \
                                             op, skip_nan, 1, LOGICAL, 0);                         \
    }

/* Per dtype, the loops of the three kinds (each loads its lanes: word, double or float; lanes past
 * n are filled by the loads and replaced by scan_load). */
#define GP_SCAN_KERNELS(NAME, numpy_name, kind, size, host_type, device_type)                     \
    GP_INLINE gp_u64v word_lanes_##NAME(const gp_lane_##NAME *x, int64_t n) { return load_word_part_##NAME(x, n, 0); } \
    GP_INLINE gp_f64v f64_lanes_##NAME(const gp_lane_##NAME *x, int64_t n)                         \
    {                                                                                              \
        return load_f64_part_##NAME(x, n, zero_lane_##NAME());                                     \
    }                                                                                              \
    GP_INLINE gp_f32v f32_lanes_##NAME(const gp_lane_##NAME *x, int64_t n)                         \
    {                                                                                              \
        return load_f32_part_##NAME(x, n, zero_lane_##NAME());                                     \
    }                                                                                              \
    GP_SCAN_KIND(NAME, word, gp_u64v, u64, GP_NL64, 8, gp_u64v, u64, word_lanes_##NAME, kind == 'i') \
    GP_SCAN_KIND(NAME, f64, gp_f64v, f64, GP_NL64, 8, gp_f64v, f64, f64_lanes_##NAME,              \
                 GP_IS_HALF(kind, size))                                                           \
    GP_SCAN_KIND(NAME, f32, gp_f32v, f32, GP_NL32, 16, gp_f64v, f64, f32_lanes_##NAME,             \
                 GP_IS_HALF(kind, size))
GP_DTYPES(GP_SCAN_KERNELS)
#undef GP_SCAN_KERNELS

/* The table's scan entries: the loops of one kind, dtype, operator and NaN rule (static, so that
 * only the entries the table names are compiled). */
#define GP_SCAN_OP_LOOPS(NAME, PREFIX, OPNAME, OP, SKIP_NAN)                                       \
    static void PREFIX##_scan_total_##OPNAME##_##NAME(const void *in, int64_t count, gp_partial *total) \
    {                                                                                              \
        PREFIX##_scan_total_##NAME(in, count, total, OP, SKIP_NAN);                                \
    }                                                                                              \
    static void PREFIX##_scan_run_##OPNAME##_##NAME(const void *in, int64_t count, void *out, int exclusive, \
                                                    int out_size, const gp_partial *offset, gp_partial *total, \
                                                    int *non_finite)                               \
    {                                                                                              \
        PREFIX##_scan_run_##NAME(in, count, out, exclusive, out_size, offset, total, non_finite, OP, SKIP_NAN); \
    }                                                                                              \
    static void PREFIX##_scan_columns_##OPNAME##_##NAME(const void *in, int64_t rows, int64_t stride, void *out, \
                                                        int64_t width, void *acc, int first, int exclusive, \
                                                        int out_size, int *non_finite)             \
    {                                                                                              \
        PREFIX##_scan_columns_##NAME(in, rows, stride, out, width, acc, first, exclusive, out_size, non_finite, OP, \
                                     SKIP_NAN);                                                    \
    }                                                                                              \
    static void PREFIX##_scan_narrow_##OPNAME##_##NAME(const void *in, int64_t rows, int64_t width, void *out, \
                                                       int exclusive, int out_size, const gp_partial *offsets, \
                                                       gp_partial *totals, int *non_finite)        \
    {                                                                                              \
        PREFIX##_scan_narrow_##NAME(in, rows, width, out, exclusive, out_size, offsets, totals, non_finite, OP, \
                                    SKIP_NAN);                                                     \
    }
#define GP_SCAN_OPS(NAME, PREFIX)                                                                  \
    GP_SCAN_OP_LOOPS(NAME, PREFIX, sum, GP_SUM, 0)                                                 \
    GP_SCAN_OP_LOOPS(NAME, PREFIX, prod, GP_PROD, 0)                                               \
    GP_SCAN_OP_LOOPS(NAME, PREFIX, min, GP_MIN, 0)                                                 \
    GP_SCAN_OP_LOOPS(NAME, PREFIX, max, GP_MAX, 0)                                                 \
    GP_SCAN_OP_LOOPS(NAME, PREFIX, nansum, GP_SUM, 1)                                              \
    GP_SCAN_OP_LOOPS(NAME, PREFIX, nanprod, GP_PROD, 1)
#define GP_ALL_SCAN_OPS(NAME, numpy_name, kind, size, host_type, device_type)                     \
    GP_SCAN_OPS(NAME, word)                                                                        \
    GP_SCAN_OPS(NAME, f64)                                                                         \
    GP_SCAN_OPS(NAME, f32)
GP_DTYPES(GP_ALL_SCAN_OPS)
#undef GP_ALL_SCAN_OPS
#undef GP_SCAN_OPS
#undef GP_SCAN_OP_LOOPS

/* ---- correlation --------------------------------------------------------------------------------- */

/* Per dtype, the lanes correlation computes in: floats in their own type (float16 is computed as
 * float32 by the driver), integers in the unsigned type of their size (wrapping, as NumPy's and
 * SciPy's integer sums do in the output's width), bool as bytes (the OR of ANDs).  Every output is
 * computed on its own, so the vector width changes no result. */
#define GP_CORRELATE_KERNELS(NAME, numpy_name, kind, size, host_type, device_type)                \
    typedef __typeof__(_Generic((host_type){0}, float: (float)0, double: (double)0,                \
                                default: (gp_bits_##NAME)0)) corr_lane_##NAME;                     \
    typedef corr_lane_##NAME corr_vec_##NAME __attribute__((vector_size(GP_NATIVE_BYTES)));        \
    GP_INLINE corr_vec_##NAME corr_load_##NAME(const corr_lane_##NAME *p, int64_t n)               \
    {                                                                                              \
        enum { L = GP_NATIVE_BYTES / size };                                                       \
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
        enum { L = GP_NATIVE_BYTES / size, U = 4 };                                                \
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

/* fn(in, out, w, extent, stride) with w the constant equal to width (2 to 7), so that the compiler
 * specializes fn's loops for it. */
#define GP_WIDTH_2_TO_7(fn, in, out, width, extent, stride)                                        \
    switch (width) {                                                                               \
    case 2: fn(in, out, 2, extent, stride); break;                                                 \
    case 3: fn(in, out, 3, extent, stride); break;                                                 \
    case 4: fn(in, out, 4, extent, stride); break;                                                 \
    case 5: fn(in, out, 5, extent, stride); break;                                                 \
    case 6: fn(in, out, 6, extent, stride); break;                                                 \
    default: fn(in, out, 7, extent, stride); break;                                                \
    }

/* out[p * dst_p + q] = in[p + q * src_q] for p < extent_p, q < extent_q, elements of BYTES bytes:
 * macro tiles of 64 x 64 elements (their source and destination rows stay in cache and in the TLB),
 * made of tiles transposed in registers: 8 x 8 when 8 elements fit a native vector, else 4 x 4,
 * else element by element.  Round r interleaves rows 2^r apart by groups of 2^r elements; it leaves
 * source column c in register bitreverse(c). */
#define GP_TRANSPOSE_KERNEL(BYTES)                                                                 \
    typedef GP_UINT_OF_SIZE(BYTES) tr_lane_##BYTES;                                                \
    typedef tr_lane_##BYTES tr_vec8_##BYTES __attribute__((vector_size(8 * BYTES)));               \
    typedef tr_lane_##BYTES tr_vec4_##BYTES __attribute__((vector_size(4 * BYTES)));               \
    GP_INLINE void transpose8_##BYTES(const tr_lane_##BYTES *in, int64_t src_q, tr_lane_##BYTES *out, int64_t dst_p) \
    {                                                                                              \
        tr_vec8_##BYTES r[8], s[8];                                                                \
        GP_UNROLL(8)                                                                               \
        for (int q = 0; q < 8; ++q) r[q] = GP_LOAD(tr_vec8_##BYTES, in + q * src_q);               \
        GP_UNROLL(4)                                                                               \
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
    GP_INLINE void transpose4_##BYTES(const tr_lane_##BYTES *in, int64_t src_q, tr_lane_##BYTES *out, int64_t dst_p) \
    {                                                                                              \
        tr_vec4_##BYTES r[4], s[4];                                                                \
        GP_UNROLL(4)                                                                               \
        for (int q = 0; q < 4; ++q) r[q] = GP_LOAD(tr_vec4_##BYTES, in + q * src_q);               \
        GP_UNROLL(2)                                                                               \
        for (int i = 0; i < 4; i += 2) {                                                           \
            s[i] = __builtin_shufflevector(r[i], r[i + 1], 0, 4, 1, 5);                            \
            s[i + 1] = __builtin_shufflevector(r[i], r[i + 1], 2, 6, 3, 7);                        \
        }                                                                                          \
        GP_UNROLL(2)                                                                               \
        for (int i = 0; i < 2; ++i) {                                                              \
            r[i] = __builtin_shufflevector(s[i], s[i + 2], 0, 1, 4, 5);                            \
            r[i + 2] = __builtin_shufflevector(s[i], s[i + 2], 2, 3, 6, 7);                        \
        }                                                                                          \
        static const int bitreverse[4] = {0, 2, 1, 3};                                             \
        GP_UNROLL(4)                                                                               \
        for (int p = 0; p < 4; ++p) GP_STORE(out + p * dst_p, r[bitreverse[p]]);                   \
    }                                                                                              \
    /* A dense side of 2 to 7 elements (source rows of extent_p == src_q elements: deinterleave; or \
     * destination rows of extent_q == dst_p: interleave) with its width a constant, which the      \
     * compiler turns into shuffles: (2^20, 3) float32 0.80 ns an element element by element. */   \
    GP_INLINE void deinterleave_##BYTES(const tr_lane_##BYTES *restrict in, tr_lane_##BYTES *restrict out, \
                                        int64_t width, int64_t rows, int64_t dst_p)                \
    {                                                                                              \
        for (int64_t q = 0; q < rows; ++q)                                                         \
            for (int64_t p = 0; p < width; ++p) out[p * dst_p + q] = in[q * width + p];            \
    }                                                                                              \
    GP_INLINE void interleave_##BYTES(const tr_lane_##BYTES *restrict in, tr_lane_##BYTES *restrict out, \
                                      int64_t width, int64_t rows, int64_t src_q)                  \
    {                                                                                              \
        for (int64_t p = 0; p < rows; ++p)                                                         \
            for (int64_t q = 0; q < width; ++q) out[p * width + q] = in[p + q * src_q];            \
    }                                                                                              \
    static int transpose_dense_narrow_##BYTES(const tr_lane_##BYTES *in, tr_lane_##BYTES *out, int64_t extent_p, \
                                              int64_t extent_q, int64_t src_q, int64_t dst_p)      \
    {                                                                                              \
        if (extent_p == src_q && extent_p >= 2 && extent_p <= 7) {                                 \
            GP_WIDTH_2_TO_7(deinterleave_##BYTES, in, out, extent_p, extent_q, dst_p);             \
            return 1;                                                                              \
        }                                                                                          \
        if (extent_q == dst_p && extent_q >= 2 && extent_q <= 7) {                                 \
            GP_WIDTH_2_TO_7(interleave_##BYTES, in, out, extent_q, extent_p, src_q);               \
            return 1;                                                                              \
        }                                                                                          \
        return 0;                                                                                  \
    }                                                                                              \
    static void transpose_##BYTES(const void *source, void *target, int64_t extent_p, int64_t extent_q, \
                                  int64_t src_q, int64_t dst_p)                                    \
    {                                                                                              \
        enum { T = 8 * BYTES <= GP_NATIVE_BYTES ? 8 : 4 * BYTES <= GP_NATIVE_BYTES ? 4 : 1 };      \
        const tr_lane_##BYTES *in = source;                                                        \
        tr_lane_##BYTES *out = target;                                                             \
        if (transpose_dense_narrow_##BYTES(in, out, extent_p, extent_q, src_q, dst_p)) return;     \
        for (int64_t q0 = 0; q0 < extent_q; q0 += 64)                                              \
            for (int64_t p0 = 0; p0 < extent_p; p0 += 64) {                                        \
                const int64_t q1 = extent_q - q0 < 64 ? extent_q : q0 + 64;                        \
                const int64_t p1 = extent_p - p0 < 64 ? extent_p : p0 + 64;                        \
                int64_t q = q0;                                                                    \
                for (; q + T <= q1; q += T) {                                                      \
                    int64_t p = p0;                                                                \
                    for (; p + T <= p1; p += T) {                                                  \
                        if (T == 8) transpose8_##BYTES(in + p + q * src_q, src_q, out + p * dst_p + q, dst_p); \
                        else if (T == 4) transpose4_##BYTES(in + p + q * src_q, src_q, out + p * dst_p + q, dst_p); \
                        else out[p * dst_p + q] = in[p + q * src_q];                               \
                    }                                                                              \
                    for (; p < p1; ++p)                                                            \
                        for (int64_t k = q; k < q + T; ++k) out[p * dst_p + k] = in[p + k * src_q]; \
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
#undef GP_WIDTH_2_TO_7

/* ---- the table ------------------------------------------------------------------------------------ */

#define GP_REDUCE_ENTRY(NAME, OP, SKIP_NAN, ACC, PREFIX, OPNAME)                                   \
    t.reduce_run[OP][SKIP_NAN][ACC][GP_##NAME] = PREFIX##_run_##OPNAME##_##NAME;                   \
    t.reduce_columns[OP][SKIP_NAN][ACC][GP_##NAME] = PREFIX##_columns_##OPNAME##_##NAME;

/* Entries exist where the accumulator rules (gp_reduce_acc, gp_scan_acc) can ask for them; the
 * NaN-skipping ones (the second index 1) for float inputs. */
#define GP_REDUCE_ENTRIES(NAME, numpy_name, kind, size, host_type, device_type)                   \
    GP_REDUCE_ENTRY(NAME, GP_MIN, 0, GP_ACC_SAME, minmax, min)                                     \
    GP_REDUCE_ENTRY(NAME, GP_MAX, 0, GP_ACC_SAME, minmax, max)                                     \
    if (kind != 'f') {                                                                             \
        GP_REDUCE_ENTRY(NAME, GP_SUM, 0, GP_ACC_WORD, word, sum)                                   \
        GP_REDUCE_ENTRY(NAME, GP_PROD, 0, GP_ACC_WORD, word, prod)                                 \
    }                                                                                              \
    GP_REDUCE_ENTRY(NAME, GP_SUM, 0, GP_ACC_F64, f64, sum)                                         \
    GP_REDUCE_ENTRY(NAME, GP_PROD, 0, GP_ACC_F64, f64, prod)                                       \
    if (kind == 'f') {                                                                             \
        GP_REDUCE_ENTRY(NAME, GP_MIN, 1, GP_ACC_SAME, minmax, nanmin)                              \
        GP_REDUCE_ENTRY(NAME, GP_MAX, 1, GP_ACC_SAME, minmax, nanmax)                              \
        GP_REDUCE_ENTRY(NAME, GP_SUM, 1, GP_ACC_F64, f64, nansum)                                  \
        GP_REDUCE_ENTRY(NAME, GP_PROD, 1, GP_ACC_F64, f64, nanprod)                                \
    }                                                                                              \
    if (kind == 'f' && size <= 4) {                                                                \
        GP_F32_ENTRY(NAME, GP_SUM, 0, sum)                                                         \
        GP_F32_ENTRY(NAME, GP_PROD, 0, prod)                                                       \
        GP_F32_ENTRY(NAME, GP_SUM, 1, nansum)                                                      \
        GP_F32_ENTRY(NAME, GP_PROD, 1, nanprod)                                                    \
    }
/* float32 accumulation: the double loop along rows, float32 blocks along columns */
#define GP_F32_ENTRY(NAME, OP, SKIP_NAN, OPNAME)                                                   \
    t.reduce_run[OP][SKIP_NAN][GP_ACC_F32][GP_##NAME] = f64_run_##OPNAME##_##NAME;                 \
    t.reduce_columns[OP][SKIP_NAN][GP_ACC_F32][GP_##NAME] = f32_columns_##OPNAME##_##NAME;

/* argmin/argmax find the best value with min/max's loops, then its first index (rows of 4- and
 * 8-byte elements in one pass first); any, all and count_nonzero along columns all count; var, std
 * and mean share the moments' loops. */
#define GP_MOMENTS_ENTRIES(NAME, kind, OP)                                                             \
    t.reduce_run[OP][0][GP_ACC_MOMENTS][GP_##NAME] = moments_run_##NAME;                           \
    t.reduce_columns[OP][0][GP_ACC_MOMENTS][GP_##NAME] = moments_columns_##NAME;                   \
    if (kind == 'f') {                                                                             \
        t.reduce_run[OP][1][GP_ACC_MOMENTS][GP_##NAME] = nanmoments_run_##NAME;                    \
        t.reduce_columns[OP][1][GP_ACC_MOMENTS][GP_##NAME] = nanmoments_columns_##NAME;            \
    }
#define GP_FAMILY_ENTRIES(NAME, numpy_name, kind, size, host_type, device_type)                   \
    t.reduce_run[GP_ARGMIN][0][GP_ACC_SAME][GP_##NAME] = minmax_run_min_##NAME;                    \
    t.reduce_run[GP_ARGMAX][0][GP_ACC_SAME][GP_##NAME] = minmax_run_max_##NAME;                    \
    t.reduce_run[GP_ANY][0][GP_ACC_WORD][GP_##NAME] = any_run_##NAME;                              \
    t.reduce_run[GP_ALL][0][GP_ACC_WORD][GP_##NAME] = all_run_##NAME;                              \
    t.reduce_run[GP_COUNT_NONZERO][0][GP_ACC_WORD][GP_##NAME] = count_run_##NAME;                  \
    t.reduce_columns[GP_ANY][0][GP_ACC_WORD][GP_##NAME] = count_columns_##NAME;                    \
    t.reduce_columns[GP_ALL][0][GP_ACC_WORD][GP_##NAME] = count_columns_##NAME;                    \
    t.reduce_columns[GP_COUNT_NONZERO][0][GP_ACC_WORD][GP_##NAME] = count_columns_##NAME;          \
    GP_MOMENTS_ENTRIES(NAME, kind, GP_VAR)                                                         \
    GP_MOMENTS_ENTRIES(NAME, kind, GP_STD)                                                         \
    GP_MOMENTS_ENTRIES(NAME, kind, GP_MEAN)                                                        \
    t.find[GP_##NAME] = find_##NAME;                                                               \
    t.arg_columns[0][0][GP_##NAME] = arg_columns_min_##NAME;                                       \
    t.arg_columns[0][1][GP_##NAME] = arg_columns_max_##NAME;                                       \
    GP_WIDE_ONLY(size, t.arg_run[0][GP_##NAME] = arg_run_min_##NAME;                               \
                       t.arg_run[1][GP_##NAME] = arg_run_max_##NAME;)                              \
    if (kind == 'f') {                                                                             \
        t.reduce_run[GP_ARGMIN][1][GP_ACC_SAME][GP_##NAME] = minmax_run_nanmin_##NAME;             \
        t.reduce_run[GP_ARGMAX][1][GP_ACC_SAME][GP_##NAME] = minmax_run_nanmax_##NAME;             \
        t.arg_columns[1][0][GP_##NAME] = arg_columns_nanmin_##NAME;                                \
        t.arg_columns[1][1][GP_##NAME] = arg_columns_nanmax_##NAME;                                \
    }

#define GP_SCAN_ENTRY(NAME, OP, SKIP_NAN, ACC, PREFIX, OPNAME)                                     \
    t.scan_total[OP][SKIP_NAN][ACC][GP_##NAME] = PREFIX##_scan_total_##OPNAME##_##NAME;            \
    t.scan_run[OP][SKIP_NAN][ACC][GP_##NAME] = PREFIX##_scan_run_##OPNAME##_##NAME;                \
    t.scan_columns[OP][SKIP_NAN][ACC][GP_##NAME] = PREFIX##_scan_columns_##OPNAME##_##NAME;       \
    t.scan_narrow[OP][SKIP_NAN][ACC][GP_##NAME] = PREFIX##_scan_narrow_##OPNAME##_##NAME;
/* Sums and products: in words (integers), double (any), float lanes (float16 and float32); with
 * NaN read as the identity for floats.  Min and max: the dtype's own kind. */
#define GP_SCAN_ACCUMULATE_ENTRIES(NAME, kind, size, OP, SKIP_NAN, OPNAME)                         \
    if (kind != 'f' && !SKIP_NAN) {                                                                \
        GP_SCAN_ENTRY(NAME, OP, SKIP_NAN, GP_ACC_WORD, word, OPNAME)                               \
    }                                                                                              \
    if (kind == 'f' || !SKIP_NAN) {                                                                \
        GP_SCAN_ENTRY(NAME, OP, SKIP_NAN, GP_ACC_F64, f64, OPNAME)                                 \
    }                                                                                              \
    if (kind == 'f' && size <= 4) {                                                                \
        GP_SCAN_ENTRY(NAME, OP, SKIP_NAN, GP_ACC_F32, f32, OPNAME)                                 \
    }
#define GP_SCAN_ENTRIES(NAME, numpy_name, kind, size, host_type, device_type)                     \
    GP_SCAN_ACCUMULATE_ENTRIES(NAME, kind, size, GP_SUM, 0, sum)                                   \
    GP_SCAN_ACCUMULATE_ENTRIES(NAME, kind, size, GP_PROD, 0, prod)                                 \
    GP_SCAN_ACCUMULATE_ENTRIES(NAME, kind, size, GP_SUM, 1, nansum)                                \
    GP_SCAN_ACCUMULATE_ENTRIES(NAME, kind, size, GP_PROD, 1, nanprod)                              \
    if (kind != 'f') {                                                                             \
        GP_SCAN_ENTRY(NAME, GP_MIN, 0, GP_ACC_WORD, word, min)                                     \
        GP_SCAN_ENTRY(NAME, GP_MAX, 0, GP_ACC_WORD, word, max)                                     \
    } else if (size <= 4) {                                                                        \
        GP_SCAN_ENTRY(NAME, GP_MIN, 0, GP_ACC_F32, f32, min)                                       \
        GP_SCAN_ENTRY(NAME, GP_MAX, 0, GP_ACC_F32, f32, max)                                       \
    } else {                                                                                       \
        GP_SCAN_ENTRY(NAME, GP_MIN, 0, GP_ACC_F64, f64, min)                                       \
        GP_SCAN_ENTRY(NAME, GP_MAX, 0, GP_ACC_F64, f64, max)                                       \
    }

#define GP_CORRELATE_ENTRIES(NAME, numpy_name, kind, size, host_type, device_type)               \
    t.correlate[GP_##NAME] = correlate_rows_##NAME;

static void fill_table(gp_cpu_kernels *table)
{
    gp_cpu_kernels t;
    memset(&t, 0, sizeof t);
    t.name = GP_ISA_NAME;
    t.vector_bytes = GP_NATIVE_BYTES;
    GP_DTYPES(GP_REDUCE_ENTRIES)
    GP_DTYPES(GP_FAMILY_ENTRIES)
    GP_DTYPES(GP_SCAN_ENTRIES)
    GP_DTYPES(GP_CORRELATE_ENTRIES)
    t.correlate[GP_FLOAT16] = correlate_rows_FLOAT32; /* the driver converts float16 to float32 */
    t.transpose[0] = transpose_1;
    t.transpose[1] = transpose_2;
    t.transpose[2] = transpose_4;
    t.transpose[3] = transpose_8;
    *table = t;
}
#undef GP_REDUCE_ENTRY
#undef GP_REDUCE_ENTRIES
#undef GP_F32_ENTRY
#undef GP_FAMILY_ENTRIES
#undef GP_MOMENTS_ENTRIES
#undef GP_SCAN_ENTRY
#undef GP_SCAN_ACCUMULATE_ENTRIES
#undef GP_SCAN_ENTRIES
#undef GP_CORRELATE_ENTRIES

void GP_ISA_FILL(gp_cpu_kernels *table) { fill_table(table); }

#ifdef GP_ISA_TARGET
#ifdef __clang__
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif
