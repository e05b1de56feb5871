/* The call descriptor shared by the C glue, the planner and both backends.
 *
 * A call is one primitive over one input and one output.  The reduce and scan primitives work on
 * the canonical (outer, n, inner) view of a C-contiguous array: along the middle axis of length n,
 * independently for each of the outer * inner positions.  Sizes are 64-bit everywhere.  `in` and
 * `out` are host or device addresses, as the call's plan says (gp_plan.h). */
#ifndef GP_CALL_H
#define GP_CALL_H

#include <stdint.h>

#include "contract/gp_dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { GP_REDUCE, GP_SCAN, GP_CORRELATE, GP_COPY, GP_CONVERT, GP_NUM_PRIMITIVES } gp_primitive;

/* The reductions.  argmin/argmax give the int64 index along n of the first minimum (maximum), or of
 * the first NaN (NaN wins); any/all give bool (x != 0, so NaN counts as true and -0.0 as false);
 * count_nonzero gives int64.  var gives the sum of squared deviations from the mean divided by
 * n - ddof (NaN where that is not positive), std its square root, mean the mean (NaN for no
 * elements; nanmean): computed in double from the same moments whatever the input, written as the
 * float out_dtype. */
typedef enum {
    GP_SUM,
    GP_PROD,
    GP_MIN,
    GP_MAX,
    GP_ARGMIN,
    GP_ARGMAX,
    GP_ANY,
    GP_ALL,
    GP_COUNT_NONZERO,
    GP_VAR,
    GP_STD,
    GP_MEAN,
    GP_NUM_OPS
} gp_op;

/* Reduce along n: outer * inner results of out_dtype.  Supported pairs: gp_reduce_supported().
 * ddof: var and std's delta degrees of freedom (ignored by the other reductions).
 * skip_nan (float inputs; ignored for others): NaN elements are left out (nansum, nanmin, ...):
 * sum and prod read them as the identity (a slice of NaNs sums to 0); min and max give NaN only for
 * a slice of NaNs; argmin/argmax never pick a NaN and give -1 for a slice of NaNs; var, std and mean
 * count only the other elements. */
typedef struct {
    gp_op op;
    gp_dtype in_dtype, out_dtype;
    int64_t outer, n, inner;
    double ddof;
    int skip_nan;
} gp_reduce_args;

/* Inclusive (or exclusive) scan along n with `op` (cumsum, cumprod, numpy.minimum/maximum.accumulate);
 * the output has the input's shape.  exclusive: element i combines the elements before i (the first
 * is op's identity).  skip_nan: NaN elements count as op's identity (nancumsum, nancumprod).
 * initial: NULL, or the value each row starts from (row (o, i) at initial[o * inner + i], host
 * memory): an exclusive scan's first element, combined first into an inclusive one; a chunked
 * scan's carry.  8-byte values: double for a float output, else the 64-bit integer (sign-extended
 * for signed dtypes).
 * non_finite: NULL, or host memory where the backend reports whether a float sum or product wrote
 * any inf or NaN output (1; also allowed where an overflow came back finite) or none (0): both
 * combine in another order than NumPy's left fold, which can bring an overflowed running value
 * back.  See fp_errors.c.
 * Supported (op, in, out): gp_scan_supported(). */
typedef struct {
    gp_dtype in_dtype, out_dtype;
    int64_t outer, n, inner;
    int exclusive;
    gp_op op;
    int skip_nan;
    const void *initial;
    int *non_finite;
} gp_scan_args;

/* How correlate reads the image outside its bounds (scipy.signal.convolve2d's boundary): the fill
 * value, the periodic extension, or the symmetric extension (edge element repeated). */
typedef enum { GP_BOUNDARY_FILL, GP_BOUNDARY_WRAP, GP_BOUNDARY_SYMM, GP_NUM_BOUNDARIES } gp_boundary;

/* Correlation of a rows x cols image with a mask_rows x mask_cols mask, both C-contiguous and of one
 * dtype, which is also the output's:
 *   out[i, j] = sum over p < mask_rows, q < mask_cols of mask[p, q] * image(i + row_offset + p, j + col_offset + q)
 * for i < out_rows, j < out_cols; image(r, c) outside the image follows `boundary` (fill: *fill).
 * Convolution is correlation with the mask reversed; a 1-D signal is one row.  Accumulation: float16
 * in float32 or wider, float32/float64 in their own type or wider; integers wrap around in the
 * output's width; bool is the OR of ANDs (NumPy's bool dot).  mask and fill are host pointers on
 * every route. */
typedef struct {
    gp_dtype dtype;
    gp_boundary boundary;
    int64_t rows, cols, mask_rows, mask_cols, out_rows, out_cols, row_offset, col_offset;
    const void *mask, *fill;
} gp_correlate_args;

/* A C-contiguous copy of a strided view (transpose is the copy of a permuted view).  The call's in
 * points at element (0, ..., 0) of the view; strides count elements, not bytes, and may be negative
 * or zero.  out receives the product of shape elements in C order.  Elements are moved as raw 1-,
 * 2-, 4- or 8-byte words, so the dtype does not matter, only its size. */
enum { GP_MAX_DIMS = 64 }; /* NumPy's NPY_MAXDIMS */

typedef struct {
    int ndim;
    int64_t elem_size;
    int64_t shape[GP_MAX_DIMS];
    int64_t strides[GP_MAX_DIMS];
} gp_copy_args;

/* out[i] = (out_dtype)(in[i] / divisor) for i < count, NumPy's casting (float to integer truncates,
 * anything to bool is != 0); divisor 0 means no division (only float inputs are divided, in their
 * own precision, as numpy.true_divide by a Python int). */
typedef struct {
    gp_dtype in_dtype, out_dtype;
    int64_t count, divisor;
} gp_convert_args;

typedef struct {
    gp_primitive primitive;
    const void *in;
    void *out;
    /* NULL, or the strided host view `in` points into (element (0, ..., 0); shape and strides as a
     * copy's, its C order the call's element order): a row reduction or scan (inner == 1) that the
     * CPU backend reads in place, piece by piece, and the streamed route gathers tile by tile into
     * its staging slots.  The glue makes every other call's input contiguous (the GPU's short path
     * included). */
    const gp_copy_args *in_view;
    union {
        gp_reduce_args reduce;
        gp_scan_args scan;
        gp_correlate_args correlate;
        gp_copy_args copy;
        gp_convert_args convert;
    };
} gp_call;

static inline int gp_reduce_supported(gp_op op, gp_dtype in, gp_dtype out)
{
    if (!gp_dtype_valid(in)) return 0;
    if (op == GP_MIN || op == GP_MAX) return in == out;
    if (op == GP_ARGMIN || op == GP_ARGMAX || op == GP_COUNT_NONZERO) return out == GP_INT64;
    if (op == GP_ANY || op == GP_ALL) return out == GP_BOOL;
    if (op == GP_VAR || op == GP_STD || op == GP_MEAN) return gp_dtype_is_float(out);
    return (op == GP_SUM || op == GP_PROD) && gp_accumulate_supported(in, out);
}

/* Scans: sum, prod, min and max, with the reductions' dtype rule. */
static inline int gp_scan_supported(gp_op op, gp_dtype in, gp_dtype out)
{
    return (op == GP_SUM || op == GP_PROD || op == GP_MIN || op == GP_MAX) && gp_reduce_supported(op, in, out);
}

#ifdef __CUDACC__
#define GP_HOST_DEVICE __host__ __device__
#else
#define GP_HOST_DEVICE
#endif

/* Index i of an axis of length n as the boundary rule reads it: i itself inside [0, n), else its
 * periodic or symmetric image (SciPy's circular_wrap_index / reflect_symm_index), or -1 for the
 * fill value. */
static inline GP_HOST_DEVICE int64_t gp_boundary_index(int64_t i, int64_t n, gp_boundary boundary)
{
    if (i >= 0 && i < n) return i;
    if (boundary == GP_BOUNDARY_WRAP) {
        const int64_t k = i % n;
        return k < 0 ? k + n : k;
    }
    if (boundary == GP_BOUNDARY_SYMM) {
        const int64_t k = (i >= 0 ? i : -i - 1) % (2 * n);
        return k < n ? k : 2 * n - 1 - k;
    }
    return -1;
}

#ifdef __cplusplus
}
#endif

#endif
