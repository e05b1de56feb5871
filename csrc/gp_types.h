/* Types shared by the C glue, the CPU backend and the CUDA kernels.
 *
 * A primitive is described by a plain struct over the canonical (outer, n, inner) view of a
 * C-contiguous array: the operation runs along the middle axis of length n, independently for each
 * of the outer * inner positions.  Sizes are 64-bit everywhere. */
#ifndef GP_TYPES_H
#define GP_TYPES_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types; the order is the row order of every dtype dispatch table. */
typedef enum {
    GP_BOOL, GP_INT8, GP_INT16, GP_INT32, GP_INT64,
    GP_UINT8, GP_UINT16, GP_UINT32, GP_UINT64,
    GP_FLOAT16, GP_FLOAT32, GP_FLOAT64,
    GP_NUM_DTYPES
} gp_dtype;

typedef enum { GP_SUM, GP_PROD, GP_MIN, GP_MAX, GP_NUM_OPS } gp_op;

/* Reduce along n.  in holds outer*n*inner elements of in_dtype, out receives outer*inner elements of
 * out_dtype.  Supported (in_dtype, out_dtype) pairs: see gp_reduce_supported(). */
typedef struct {
    gp_op op;
    gp_dtype in_dtype, out_dtype;
    int64_t outer, n, inner;
    const void *in;
    void *out;
} gp_reduce_desc;

/* Inclusive (or exclusive) prefix sum along n; out has the shape of in. */
typedef struct {
    gp_dtype in_dtype, out_dtype;
    int64_t outer, n, inner;
    int exclusive;
    const void *in;
    void *out;
} gp_scan_desc;

/* A C-contiguous copy of a strided view (transpose is the copy of a permuted view).  in points at
 * element (0, ..., 0) of the view; strides count elements, not bytes, and may be negative or zero.
 * out receives the product of shape elements in C order.  Elements are moved as raw 1-, 2-, 4- or
 * 8-byte words, so the dtype does not matter, only its size. */
enum { GP_MAX_DIMS = 64 }; /* NumPy's NPY_MAXDIMS */

typedef struct {
    int ndim;
    int64_t elem_size;
    int64_t shape[GP_MAX_DIMS];
    int64_t strides[GP_MAX_DIMS];
    const void *in;
    void *out;
} gp_copy_desc;

/* How correlate reads the image outside its bounds (scipy.signal.convolve2d's boundary): the fill
 * value, the periodic extension, or the symmetric extension (edge element repeated). */
/* The primitives a host call on a GPU may stream (each has its own short-path crossover). */
typedef enum { GP_STREAMED_REDUCE, GP_STREAMED_SCAN, GP_STREAMED_CORRELATE, GP_STREAMED_COPY } gp_streamed_op;

typedef enum { GP_BOUNDARY_FILL, GP_BOUNDARY_WRAP, GP_BOUNDARY_SYMM, GP_NUM_BOUNDARIES } gp_boundary;

/* Correlation of a rows x cols image with a mask_rows x mask_cols mask, both C-contiguous and of one
 * dtype, which is also the output's:
 *   out[i, j] = sum over p < mask_rows, q < mask_cols of mask[p, q] * image(i + row_offset + p, j + col_offset + q)
 * for i < out_rows, j < out_cols; image(r, c) outside the image follows `boundary` (fill: *fill).
 * Convolution is correlation with the mask reversed; a 1-D signal is one row.  Accumulation: float16
 * in float32 or wider, float32/float64 in their own type or wider; integers wrap around in the
 * output's width; bool is the OR of ANDs (NumPy's bool dot).  mask and fill are host pointers for
 * every entry point; in and out are host or device pointers as the entry point says. */
typedef struct {
    gp_dtype dtype;
    gp_boundary boundary;
    int64_t rows, cols, mask_rows, mask_cols, out_rows, out_cols, row_offset, col_offset;
    const void *in, *mask, *fill;
    void *out;
} gp_correlate_desc;

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

typedef enum {
    GP_OK = 0,
    GP_ERR_NOMEM,   /* out of device or host memory: MemoryError */
    GP_ERR_INVALID, /* a request the backend does not support: ValueError */
    GP_ERR_DEVICE   /* any other CUDA failure: RuntimeError */
} gp_status;

typedef struct {
    gp_status status;
    char message[320];
} gp_error;

/* The accumulator rule, one place for both backends:
 *  - sum/prod/scan into an integer output: every integer and bool input accumulates in 64-bit
 *    two's complement, which wraps exactly as NumPy does; out_dtype is GP_INT64 or GP_UINT64 (the
 *    caller truncates for narrower integer dtypes, which commutes with + and *);
 *  - into GP_FLOAT64 from any input; into GP_FLOAT32 from float16/float32; into GP_FLOAT16 from
 *    float16 (accumulated in float32, as NumPy does);
 *  - min/max: out_dtype == in_dtype. */
static inline int64_t gp_dtype_size(gp_dtype t)
{
    static const int64_t sizes[GP_NUM_DTYPES] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8};
    return sizes[t];
}

static inline int gp_dtype_is_float(gp_dtype t) { return t >= GP_FLOAT16 && t <= GP_FLOAT64; }

static inline int gp_accumulate_supported(gp_dtype in, gp_dtype out)
{
    if (out == GP_INT64 || out == GP_UINT64) return !gp_dtype_is_float(in);
    if (out == GP_FLOAT64) return (int)in >= 0 && (int)in < GP_NUM_DTYPES;
    if (out == GP_FLOAT32) return in == GP_FLOAT16 || in == GP_FLOAT32;
    if (out == GP_FLOAT16) return in == GP_FLOAT16;
    return 0;
}

static inline int gp_reduce_supported(gp_op op, gp_dtype in, gp_dtype out)
{
    if ((int)in < 0 || (int)in >= GP_NUM_DTYPES) return 0;
    if (op == GP_MIN || op == GP_MAX) return in == out;
    return (op == GP_SUM || op == GP_PROD) && gp_accumulate_supported(in, out);
}

#ifdef __cplusplus
}
#endif

#endif
