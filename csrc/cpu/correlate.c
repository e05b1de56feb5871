/* Correlation on the CPU (see gp_correlate_args), with the CUDA backend's results: integers wrap
 * around in 64 bits (the output keeps the low bits), bool is the OR of ANDs, floats accumulate in
 * double (at least as accurate as NumPy's and SciPy's float32 sums) and are rounded once.
 *
 * Each output row is computed BLOCK outputs at a time.  For every mask row, the input segment the
 * block needs is converted once into a buffer, with the boundary rule applied (a single run for
 * the part inside the image), and the taps sweep it; masks wider than BLOCK go in chunks. */
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_backend.h"

enum { BLOCK = 1024 };

/* A buffer of accumulator words: doubles for float dtypes, else 64-bit integers. */
typedef struct {
    double *f;
    uint64_t *u;
} words;

static words words_at(words w, int64_t offset)
{
    return (words){w.f ? w.f + offset : NULL, w.u ? w.u + offset : NULL};
}

static int words_alloc(words *w, int is_float, int64_t count)
{
    void *memory = malloc((size_t)count * 8);
    *w = (words){is_float ? (double *)memory : NULL, is_float ? NULL : (uint64_t *)memory};
    return memory == NULL;
}

static void words_free(words w) { free(w.f ? (void *)w.f : (void *)w.u); }

/* x[k] = image(row, first + k) for k < count; row < 0 is a row of fill values. */
static void load_segment(const gp_correlate_args *d, const void *in, int64_t row, int64_t first, int64_t count,
                         words fill, words x)
{
    const int64_t size = gp_dtype_size(d->dtype);
    const char *line = (const char *)in + (row < 0 ? 0 : row) * d->cols * size;
    for (int64_t k = 0; k < count;) {
        const int64_t col = first + k;
        if (row >= 0 && col >= 0 && col < d->cols) { /* the run inside the image */
            const int64_t run = count - k < d->cols - col ? count - k : d->cols - col;
            const words dst = words_at(x, k);
            gp_cpu_load(d->dtype, line + col * size, run, dst.f, dst.u);
            k += run;
            continue;
        }
        const int64_t source = row < 0 ? -1 : gp_boundary_index(col, d->cols, d->boundary);
        const words dst = words_at(x, k);
        if (source >= 0) gp_cpu_load(d->dtype, line + source * size, 1, dst.f, dst.u);
        else if (x.f) *dst.f = *fill.f;
        else *dst.u = *fill.u;
        ++k;
    }
}

/* acc[j] += w[q] * x[j + q] for q < taps, j < width; bool: acc[j] |= w[q] & x[j + q]. */
static void sweep(words acc, words x, words w, int64_t taps, int64_t width, int is_bool)
{
    for (int64_t q = 0; q < taps; ++q) {
        if (acc.f) {
            for (int64_t j = 0; j < width; ++j) acc.f[j] += w.f[q] * x.f[j + q];
        } else if (is_bool) {
            for (int64_t j = 0; j < width; ++j) acc.u[j] |= w.u[q] & x.u[j + q];
        } else {
            for (int64_t j = 0; j < width; ++j) acc.u[j] += w.u[q] * x.u[j + q];
        }
    }
}

int gp_cpu_correlate(const gp_call *call, gp_error *err)
{
    const gp_correlate_args *d = &call->correlate;
    const int is_float = gp_dtype_is_float(d->dtype);
    const int64_t size = gp_dtype_size(d->dtype), taps = d->mask_rows * d->mask_cols;
    const int64_t chunk = d->mask_cols < BLOCK ? d->mask_cols : BLOCK;
    words mask, fill, acc, x;
    const int failed = words_alloc(&mask, is_float, taps) | words_alloc(&fill, is_float, 1) |
                       words_alloc(&acc, is_float, BLOCK) | words_alloc(&x, is_float, BLOCK + chunk - 1);
    if (failed) {
        words_free(mask), words_free(fill), words_free(acc), words_free(x);
        return gp_fail(err, GP_ERR_NOMEM, "out of host memory in the CPU backend");
    }
    gp_cpu_load(d->dtype, d->mask, taps, mask.f, mask.u);
    gp_cpu_load(d->dtype, d->fill, 1, fill.f, fill.u);
    for (int64_t i = 0; i < d->out_rows; ++i) {
        for (int64_t j0 = 0; j0 < d->out_cols; j0 += BLOCK) {
            const int64_t width = d->out_cols - j0 < BLOCK ? d->out_cols - j0 : BLOCK;
            memset(acc.f ? (void *)acc.f : (void *)acc.u, 0, (size_t)width * 8); /* +0.0 and 0 */
            for (int64_t p = 0; p < d->mask_rows; ++p) {
                const int64_t row = gp_boundary_index(i + d->row_offset + p, d->rows, d->boundary);
                for (int64_t q0 = 0; q0 < d->mask_cols; q0 += chunk) {
                    const int64_t count = d->mask_cols - q0 < chunk ? d->mask_cols - q0 : chunk;
                    load_segment(d, call->in, row, j0 + d->col_offset + q0, width + count - 1, fill, x);
                    sweep(acc, x, words_at(mask, p * d->mask_cols + q0), count, width, d->dtype == GP_BOOL);
                }
            }
            gp_cpu_store(d->dtype, acc.f, acc.u, width, (char *)call->out + (i * d->out_cols + j0) * size);
        }
    }
    words_free(mask), words_free(fill), words_free(acc), words_free(x);
    return 0;
}
