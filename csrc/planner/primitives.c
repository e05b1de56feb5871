/* The planner's table: for each primitive, its checks, its traffic, its CPU backend and its cost
 * constants.
 *
 * The cost constants were fitted (time = fixed + bytes / rate + multiply-adds / rate + fresh result
 * pages / rate, relative least squares) to end-to-end times of every op from NumPy arrays, float32
 * and int32, on the H100 machine (16 host cores, PCIe 5): `python -m gpuprims.bench --calibrate
 * --budget 0.1` at c7e4c01 (the CPU backend of issue 14: vector loops, all cores), the CPU over
 * 2^8..2^26 elements, the GPU's short path over 2^8..2^22.  Median errors of the fits 6-25 %.  The
 * fresh-page rates (cpu_fresh_gbps) are from a later run of the same calibration on the H200
 * machine (16 host cores), after large new results came to be touched first by every thread
 * (csrc/parallel/first_touch.h): scan 35.4, correlate 46.1, copy 31.4 GB/s, where the H100 run had
 * fitted 14.2, 21.4 and 20.0 to threads faulting the same huge pages.  (The prefix_sum of 2^30
 * float32, fresh result against written, gave 41 GB/s directly.)  The GPU
 * short path's copies are the shared h2d/d2h rates (costs.c); cuda_fixed_us is what is left.
 * stream_min_bytes are the short path / streaming crossovers measured on the H200 (float32 from
 * pageable memory, short path vs streamed, ms): sum 16 MiB 0.98 vs 1.21, 32 MiB 1.89 vs 1.30;
 * prefix_sum 2 MiB 0.31 vs 0.22; convolve 2 MiB 0.33 vs 0.24 (7 taps); convolve2d 2 MiB 0.32 vs 0.22
 * (5 x 5); transpose 2 MiB 0.30 vs 0.27 (2 MiB was the smallest size measured).
 *
 * On that machine the CPU backend finishes every reduction first (sum of 2^26 float32: 1.1-2.5 ms,
 * streamed from pageable memory 5.5 ms); the GPU takes scans, convolutions and transposes whose
 * results are large enough to come in fresh pages, while the streamed route can write them to the
 * pinned cache's blocks.  Results larger than the cache come in fresh pages on either route, and
 * the CPU backend takes them (H200 host, prefix_sum of 2^30 float32: 228 ms, streamed 284 ms). */
#include "contract/copy_layout.h"
#include "cpu/cpu_backend.h"
#include "planner/primitives.h"

#define MIB (1024.0 * 1024.0)

static int invalid(gp_error *err, const char *message) { return gp_fail(err, GP_ERR_INVALID, message); }

/* ---- reduce -------------------------------------------------------------------------------------- */

static int reduce_check(const gp_call *call, gp_error *err)
{
    const gp_reduce_args *r = &call->reduce;
    if ((int)r->op < 0 || r->op >= GP_NUM_OPS || !gp_reduce_supported(r->op, r->in_dtype, r->out_dtype))
        return invalid(err, "unsupported reduction or dtype pair");
    if (r->outer < 1 || r->n < 1 || r->inner < 1) return invalid(err, "reduce: empty (outer, n, inner)");
    return 0;
}

static gp_traffic reduce_traffic(const gp_call *call)
{
    const gp_reduce_args *r = &call->reduce;
    const int64_t count = r->outer * r->n * r->inner;
    return (gp_traffic){(size_t)(count * gp_dtype_size(r->in_dtype)),
                        (size_t)(r->outer * r->inner * gp_dtype_size(r->out_dtype)), 0, count, 0.0};
}

/* ---- scan ---------------------------------------------------------------------------------------- */

static int scan_check(const gp_call *call, gp_error *err)
{
    const gp_scan_args *s = &call->scan;
    if (!gp_scan_supported(s->op, s->in_dtype, s->out_dtype))
        return invalid(err, "unsupported scan or dtype pair");
    if (s->outer < 1 || s->n < 1 || s->inner < 1) return invalid(err, "scan: empty (outer, n, inner)");
    return 0;
}

static gp_traffic scan_traffic(const gp_call *call)
{
    const gp_scan_args *s = &call->scan;
    const int64_t count = s->outer * s->n * s->inner;
    return (gp_traffic){(size_t)(count * gp_dtype_size(s->in_dtype)), (size_t)(count * gp_dtype_size(s->out_dtype)), 0,
                        count, 0.0};
}

/* ---- correlate ----------------------------------------------------------------------------------- */

static int correlate_check(const gp_call *call, gp_error *err)
{
    const gp_correlate_args *c = &call->correlate;
    if (!gp_dtype_valid(c->dtype) || (int)c->boundary < 0 || c->boundary >= GP_NUM_BOUNDARIES)
        return invalid(err, "correlate: unknown dtype or boundary mode");
    if (c->rows < 1 || c->cols < 1 || c->mask_rows < 1 || c->mask_cols < 1 || c->out_rows < 1 || c->out_cols < 1)
        return invalid(err, "correlate: an empty image, mask or output");
    if (c->mask == NULL || c->fill == NULL) return invalid(err, "correlate: no mask or fill value");
    return 0;
}

static gp_traffic correlate_traffic(const gp_call *call)
{
    const gp_correlate_args *c = &call->correlate;
    const int64_t size = gp_dtype_size(c->dtype), outputs = c->out_rows * c->out_cols;
    return (gp_traffic){(size_t)(c->rows * c->cols * size), (size_t)(outputs * size), 0, outputs,
                        (double)outputs * (double)(c->mask_rows * c->mask_cols)};
}

/* ---- copy ---------------------------------------------------------------------------------------- */

static int copy_check(const gp_call *call, gp_error *err)
{
    const gp_copy_args *c = &call->copy;
    if (c->elem_size != 1 && c->elem_size != 2 && c->elem_size != 4 && c->elem_size != 8)
        return invalid(err, "strided copy: element size must be 1, 2, 4 or 8 bytes");
    if (c->ndim < 0 || c->ndim > GP_MAX_DIMS) return invalid(err, "strided copy: too many dimensions");
    for (int d = 0; d < c->ndim; ++d)
        if (c->shape[d] < 0) return invalid(err, "strided copy: negative extent");
    return 0;
}

static gp_traffic copy_traffic(const gp_call *call)
{
    const gp_copy_args *c = &call->copy;
    int64_t lowest, extent;
    gp_copy_span(c, &lowest, &extent);
    const int64_t count = gp_copy_count(c);
    return (gp_traffic){(size_t)(extent * c->elem_size), (size_t)(count * c->elem_size),
                        (size_t)(-lowest * c->elem_size), count, 0.0};
}

/* ---- convert ------------------------------------------------------------------------------------- */

static int convert_check(const gp_call *call, gp_error *err)
{
    const gp_convert_args *c = &call->convert;
    if (!gp_dtype_valid(c->in_dtype) || !gp_dtype_valid(c->out_dtype)) return invalid(err, "convert: unknown dtype");
    if (c->count < 0 || c->divisor < 0) return invalid(err, "convert: negative count or divisor");
    return 0;
}

static gp_traffic convert_traffic(const gp_call *call)
{
    const gp_convert_args *c = &call->convert;
    return (gp_traffic){(size_t)(c->count * gp_dtype_size(c->in_dtype)), (size_t)(c->count * gp_dtype_size(c->out_dtype)),
                        0, c->count, 0.0};
}

/* ---- the table ----------------------------------------------------------------------------------- */

const gp_primitive_row gp_primitives[GP_NUM_PRIMITIVES] = {
    /*         cpu: fixed us, GB/s, GMAC/s, fresh GB/s;  cuda: fixed us, GMAC/s;  streams from */
    [GP_REDUCE] = {"reduce", reduce_check, reduce_traffic, gp_cpu_reduce, 1,
                   {6.16, 233.6, 0.0, 0.0, 31.2, 0.0, 32 * MIB}},
    [GP_SCAN] = {"scan", scan_check, scan_traffic, gp_cpu_scan, 1, {4.53, 137.6, 0.0, 35.4, 32.6, 0.0, 2 * MIB}},
    /* cpu_gbps: the fit found no byte term beyond the multiply-adds (0: not counted) */
    [GP_CORRELATE] = {"correlate", correlate_check, correlate_traffic, gp_cpu_correlate, 1,
                      {19.7, 0.0, 136.7, 46.1, 42.4, 9248.0, 2 * MIB}},
    [GP_COPY] = {"copy", copy_check, copy_traffic, gp_cpu_copy, 1, {4.57, 114.7, 0.0, 31.4, 32.5, 0.0, 2 * MIB}},
    [GP_CONVERT] = {"convert", convert_check, convert_traffic, NULL, 0, {0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0}},
};
