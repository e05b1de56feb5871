/* The CPU backend's typed loops, one table per instruction set.
 *
 * simd_kernels.h holds every loop once, written with the generic vectors of simd.h and generated
 * per dtype from the dtype table; isa_baseline.c, isa_avx2.c and isa_avx512.c compile it for their
 * instruction set, each filling a gp_cpu_kernels table.  dispatch.c picks a table once, by what the
 * CPU supports, or GPUPRIMS_CPU_ISA.  The drivers (reduce.c, scan.c, correlate.c, copy.c) cut a call
 * into fixed pieces, hand them to threads and call the table's loops on them.  Every table computes
 * the same bits: only the speed differs. */
#ifndef GP_CPU_KERNELS_H
#define GP_CPU_KERNELS_H

#include <stdint.h>

#include "contract/gp_call.h"

/* How a reduction or scan accumulates (see simd_kernels.h):
 *   GP_ACC_SAME  min/max in the input's own type (argmin/argmax too, then find the first index);
 *   GP_ACC_WORD  integer and bool sum/prod in 64-bit two's complement, wrapping as NumPy; any, all
 *                and count_nonzero as 64-bit counts (0/1 per piece for any and all);
 *   GP_ACC_F64   in double: every float reduction but GP_ACC_F32's, products with a float32 result,
 *                and scans with a float64 result;
 *   GP_ACC_F32   sums of float16/float32 with a float32 or float16 result, and products with a float16
 *                result: as GP_ACC_F64,
 *                except that along columns blocks of 8 rows are combined in float32 first; scans in
 *                float32 lanes (NumPy's precision), the pieces' totals and offsets in double;
 *   GP_ACC_MOMENTS var, std and mean: count, mean and sum of squared deviations (M2) in double. */
typedef enum { GP_ACC_SAME, GP_ACC_WORD, GP_ACC_F64, GP_ACC_F32, GP_ACC_MOMENTS, GP_NUM_ACCS } gp_acc_kind;

/* A reduction's or scan's partial result: f for the float kinds, u for GP_ACC_WORD and for the
 * bits of a GP_ACC_SAME value (nan: the value is a NaN, the first of its piece); GP_ACC_MOMENTS:
 * u the count, f the mean and m2 the sum of squared deviations from it. */
typedef struct {
    double f;
    uint64_t u;
    int nan;
    double m2;
} gp_partial;

/* Elements per piece of a contiguous reduction or scan: pieces are the unit of work of the threads
 * and fix every result's order of operations, so results do not depend on the thread count. */
enum { GP_CPU_PIECE = 16384 };

/* The widest column tile of a reduction or scan along a non-contiguous axis: the drivers keep its
 * accumulator row on the stack, and the count loops their per-lane counters. */
enum { GP_CPU_COLUMN_TILE = 1024 };

/* Along columns narrower than this a column loop's vectors would be mostly empty: reductions run
 * the row loops on transposed blocks of GP_CPU_NARROW_ROWS rows (reduce.c), and scans the narrow
 * loops on such blocks, which are their threads' unit (scan.c).  A block (at most 15 columns of 8
 * bytes, 60 KiB) stays in a core's L2. */
enum { GP_CPU_NARROW_COLUMNS = 16, GP_CPU_NARROW_ROWS = 512 };

/* Reduces count (1 .. GP_CPU_PIECE) contiguous elements into *partial. */
typedef void (*gp_reduce_run_fn)(const void *in, int64_t count, gp_partial *partial);
/* Folds `rows` rows of `width` contiguous elements, rows `stride` elements apart, into the
 * accumulator row acc (width slots of the kind's type: the input's type, uint64_t or double);
 * with `first`, acc is set first (the identity, or for min/max the first row).  GP_ACC_MOMENTS
 * takes every row in one call (first set) and 3 * width doubles: each column's shift (its first
 * row), then the sums of the deviations from it, then of their squares; the NaN-skipping loops a
 * fourth row, each column's count of numbers. */
typedef void (*gp_reduce_columns_fn)(const void *in, int64_t rows, int64_t stride, int64_t width, void *acc,
                                     int first);

/* What a find loop looks for: an element equal in value to *value (-0.0 equals 0.0), a NaN, a
 * nonzero element (x != 0: NaN is nonzero, -0.0 is not), a zero one, or one equal to *value or a
 * NaN (nanargmin's +inf, which NumPy ties with NaN). */
typedef enum { GP_FIND_EQUAL, GP_FIND_NAN, GP_FIND_NONZERO, GP_FIND_ZERO, GP_FIND_EQUAL_OR_NAN, GP_NUM_FINDS } gp_find_mode;
/* The index of the first of count contiguous elements that matches, or -1. */
typedef int64_t (*gp_find_fn)(const void *in, int64_t count, const void *value, gp_find_mode mode);
/* argmin (argmax) along columns: each of `width` columns' first minimum (maximum) or first NaN over
 * `rows` rows `stride` elements apart: its value to values[j] (the input's type) and its row to
 * index[j].  The NaN-skipping loops read a NaN as +inf (argmin) or -inf (argmax), as NumPy's
 * nanargmin/nanargmax, and give -1 for a column of NaNs. */
typedef void (*gp_arg_columns_fn)(const void *in, int64_t rows, int64_t stride, int64_t width, void *values,
                                  int64_t *index);
/* argmin (argmax) in one pass of each of `width` columns of `rows` contiguous rows (rows * width
 * below 2^31, width as gp_arg_run_takes says): column j's first minimum (maximum) row to index[j].
 * 0, or -1 when they hold a NaN (for either NaN rule: the find loops then apply it) or for another
 * width. */
typedef int (*gp_arg_run_fn)(const void *in, int64_t rows, int64_t width, int64_t *index);
/* Whether the one-pass loop takes `width` columns in vectors of `lanes` elements: 1 to 8 or 16
 * columns, no more than the lanes. */
static inline int gp_arg_run_takes(int64_t width, int64_t lanes) { return width <= lanes && (width <= 8 || width == 16); }

/* Scans count (1 .. GP_CPU_PIECE) contiguous elements with the loop's operator into out, whose
 * elements are out_size bytes (the kind's type: uint64_t, double or float; narrower for float16 and
 * for integer min/max, which keep the input's dtype): out[i] = *offset op the inclusive (or
 * exclusive) scan of the piece at i; *total, where total is not NULL, is the piece's total, as the
 * total loop computes it (the float kinds' offsets and totals are doubles).  *non_finite is set to 1
 * when a float sum's or product's outputs held an inf or NaN, and where an overflow or invalid
 * operation of the loop left them finite; else left. */
typedef void (*gp_scan_run_fn)(const void *in, int64_t count, void *out, int exclusive, int out_size,
                               const gp_partial *offset, gp_partial *total, int *non_finite);
typedef void (*gp_scan_total_fn)(const void *in, int64_t count, gp_partial *total);
/* Scans `rows` rows of `width` contiguous columns (rows `stride` elements apart in the input and in
 * out), carrying each column's running value in acc (width slots of the kind's type; set first with
 * `first`); *non_finite as the run loop's. */
typedef void (*gp_scan_columns_fn)(const void *in, int64_t rows, int64_t stride, void *out, int64_t width, void *acc,
                                   int first, int exclusive, int out_size, int *non_finite);

/* Scans `rows` rows of `width` (2 .. GP_CPU_NARROW_COLUMNS - 1) contiguous columns into out (out_size
 * bytes an element; NULL: nothing written, offsets not read), column j carried from offsets[j] down
 * the rows; where totals is not NULL, totals[j] is column j's combination from the identity, in the
 * kind's type.  The loop may write past a row's end, into the block's later rows, unless out is the
 * input.  *non_finite as the run loop's. */
typedef void (*gp_scan_narrow_fn)(const void *in, int64_t rows, int64_t width, void *out, int exclusive, int out_size,
                                  const gp_partial *offsets, gp_partial *totals, int *non_finite);

/* Correlation of `width` outputs: out[j] = the sum over p < mask_rows, q < mask_cols of
 * mask[p * mask_cols + q] * rows[p][j + q] (bool: the OR of ANDs), accumulated in that order from 0.
 * Elements are the dtype's (float16: float32, which the driver converts), integers wrap in their
 * width. */
typedef void (*gp_correlate_rows_fn)(void *out, int64_t width, const void *const *rows, const void *mask,
                                     int64_t mask_rows, int64_t mask_cols);

/* The transpose out[p * dst_p + q] = in[p + q * src_q] for p < extent_p, q < extent_q (strides in
 * elements; the source contiguous along p, the destination along q). */
typedef void (*gp_transpose_fn)(const void *in, void *out, int64_t extent_p, int64_t extent_q, int64_t src_q,
                                int64_t dst_p);
/* The index in gp_cpu_kernels.transpose of elements of `size` (1, 2, 4 or 8) bytes. */
static inline int gp_transpose_index(int64_t size) { return size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3; }

typedef struct {
    const char *name; /* "baseline", "avx2", "avx512" */
    int64_t vector_bytes; /* the loops' vectors: 16, 32 or 64 bytes */
    /* reductions by operator, NaN rule (1: NaN elements left out; float inputs) and accumulator kind */
    gp_reduce_run_fn reduce_run[GP_NUM_OPS][2][GP_NUM_ACCS][GP_NUM_DTYPES];
    gp_reduce_columns_fn reduce_columns[GP_NUM_OPS][2][GP_NUM_ACCS][GP_NUM_DTYPES];
    gp_find_fn find[GP_NUM_DTYPES];
    gp_arg_columns_fn arg_columns[2][2][GP_NUM_DTYPES]; /* [NaN rule][0] argmin, [1] argmax */
    gp_arg_run_fn arg_run[2][GP_NUM_DTYPES]; /* [0] argmin, [1] argmax; elements of 4 and 8 bytes */
    /* scans by operator, NaN rule (1: NaN read as the identity) and accumulator kind */
    gp_scan_total_fn scan_total[GP_NUM_OPS][2][GP_NUM_ACCS][GP_NUM_DTYPES];
    gp_scan_run_fn scan_run[GP_NUM_OPS][2][GP_NUM_ACCS][GP_NUM_DTYPES];
    gp_scan_columns_fn scan_columns[GP_NUM_OPS][2][GP_NUM_ACCS][GP_NUM_DTYPES];
    gp_scan_narrow_fn scan_narrow[GP_NUM_OPS][2][GP_NUM_ACCS][GP_NUM_DTYPES];
    gp_correlate_rows_fn correlate[GP_NUM_DTYPES];
    gp_transpose_fn transpose[4]; /* for elements of 1, 2, 4 and 8 bytes */
} gp_cpu_kernels;

/* isa_*.c: fill a table with their instruction set's loops. */
void gp_cpu_fill_kernels_baseline(gp_cpu_kernels *table);
#if defined(__x86_64__) || defined(__i386__)
#define GP_CPU_X86 1
void gp_cpu_fill_kernels_avx2(gp_cpu_kernels *table);
void gp_cpu_fill_kernels_avx512(gp_cpu_kernels *table);
#endif

/* dispatch.c: the table in use, picked on first use: the best the CPU runs, or the one
 * GPUPRIMS_CPU_ISA names ("baseline", "avx2" or "avx512"; one the CPU lacks falls back). */
const gp_cpu_kernels *gp_cpu_kernels_get(void);
/* Switches to the named table (tests); returns 0, or -1 when unknown or unsupported here. */
int gp_cpu_kernels_select(const char *name);

/* The accumulator kinds of a reduction (op, in, out) and of a scan (op, in, out; min and max keep
 * the input's dtype, so that this gives GP_ACC_WORD for integers and the float kind of the dtype).
 * Products with a float32 result multiply in double, as on the GPU: float32 products of factors near
 * 1 lose their cross term below half an ulp, an error of one sign, so lanes and blocks of them drift
 * with n where NumPy's running product does not (cumprod of 65536 factors within 1e-4 of 1: 3x
 * NumPy's error in float32 lanes).  Float16 results keep float32 lanes, 2^13 times finer. */
static inline gp_acc_kind gp_scan_acc(gp_op op, gp_dtype in, gp_dtype out)
{
    if (!gp_dtype_is_float(out)) return GP_ACC_WORD;
    const int narrow = (out == GP_FLOAT32 || out == GP_FLOAT16) && (in == GP_FLOAT32 || in == GP_FLOAT16);
    return narrow && !(op == GP_PROD && out == GP_FLOAT32) ? GP_ACC_F32 : GP_ACC_F64;
}

/* How a scan's min and max compare, for its input dtype: words of a signed dtype as signed (their
 * values sign-extended); and float16 gives a tie of two zeros to the earlier element, as NumPy's
 * half-precision loops (a >= b ? a : b), where its float32 and float64 loops give it to the later
 * (np.maximum.accumulate([-0.0, 0.0]) is [-0.0, 0.0], for float16 [-0.0, -0.0]).  1 for either. */
static inline int gp_minmax_rule(gp_dtype in) { return gp_dtype_is_signed(in) || in == GP_FLOAT16; }

/* A scan's operator on partials of kind `acc` (GP_ACC_WORD: u; the float kinds: f, where NaN wins
 * min and max as in numpy.minimum/maximum), with min and max by `rule` (gp_minmax_rule): *a = *a op
 * *b, b the later partial; and the operator's identity (a float sum's: -0.0). */
static inline void gp_scan_combine(gp_acc_kind acc, gp_op op, int rule, gp_partial *a, const gp_partial *b)
{
    if (acc == GP_ACC_WORD) {
        const uint64_t x = a->u, y = b->u;
        switch (op) {
        case GP_SUM: a->u = x + y; break;
        case GP_PROD: a->u = x * y; break;
        case GP_MIN: a->u = (rule ? (int64_t)y < (int64_t)x : y < x) ? y : x; break;
        default: a->u = (rule ? (int64_t)y > (int64_t)x : y > x) ? y : x; break;
        }
        return;
    }
    const double x = a->f, y = b->f;
    switch (op) {
    case GP_SUM: a->f = x + y; break;
    case GP_PROD: a->f = x * y; break;
    case GP_MIN: a->f = x != x || x < y || (rule && x == y) ? x : y; break;
    default: a->f = x != x || x > y || (rule && x == y) ? x : y; break;
    }
}

static inline gp_partial gp_scan_identity(gp_op op, int rule)
{
    gp_partial identity = {.f = 0.0};
    switch (op) {
    case GP_SUM: identity.f = -0.0; break;
    case GP_PROD: identity.f = 1.0, identity.u = 1; break;
    case GP_MIN: identity.f = __builtin_inf(), identity.u = rule ? (uint64_t)INT64_MAX : UINT64_MAX; break;
    default: identity.f = -__builtin_inf(), identity.u = rule ? (uint64_t)INT64_MIN : 0; break;
    }
    return identity;
}

static inline gp_acc_kind gp_reduce_acc(gp_op op, gp_dtype in, gp_dtype out)
{
    if (op == GP_MIN || op == GP_MAX || op == GP_ARGMIN || op == GP_ARGMAX) return GP_ACC_SAME;
    if (op == GP_ANY || op == GP_ALL || op == GP_COUNT_NONZERO) return GP_ACC_WORD;
    if (op == GP_VAR || op == GP_STD || op == GP_MEAN) return GP_ACC_MOMENTS;
    if (op == GP_SUM || op == GP_PROD) return gp_scan_acc(op, in, out);
    return gp_dtype_is_float(out) ? GP_ACC_F64 : GP_ACC_WORD;
}

#endif
