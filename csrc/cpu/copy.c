/* The CPU backend of the strided copy (and so of transpose).
 *
 * After gp_copy_simplify(), the copy is a loop over "outer" dimensions around either
 *   - a row copy along the last dimension (when it is the best one to read along), or
 *   - a 2-D transpose between the last dimension and gp_copy_tile_axis(): the vector tile
 *     transposes of kernels.h when the source is contiguous along the tile axis, else a walk in
 *     square tiles small enough that the tile's source and destination lines stay in L1.
 * The threads take strips of planes (64 tile-axis elements) or of rows: every element is copied
 * once, so the cut changes nothing. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "contract/copy_layout.h"
#include "cpu/cpu_backend.h"
#include "cpu/kernels.h"
#include "cpu/parallel.h"

/* Tile edge in elements of the strided walk: 32 x 32 was the fastest of 16 to 128 for 1- to 8-byte
 * elements (8192^2 on an x86-64 host). */
enum { CPU_TILE_EDGE = 32 };
enum { STRIP = 64 };          /* tile-axis elements per task of a transpose (the kernels' macro tile) */
enum { ROW_CHUNK = 16384 };   /* elements per task of a row copy */

/* Typed loops for each element size.  rows: out[i] = in[i * step].  tiles: the plane
 * out[p * dst_p + q] = in[p * src_p + q * src_q], p < extent_p, q < extent_q, tile by tile. */
#define GP_COPY_LOOPS(TYPE)                                                                        \
    static void copy_row_##TYPE(const TYPE *restrict in, TYPE *restrict out, int64_t length, int64_t step) \
    {                                                                                              \
        if (step == 1) /* a view contiguous along its last dimension only (a[:, :k]) */            \
            memcpy(out, in, (size_t)length * sizeof(TYPE));                                        \
        else if (step == -1) /* the common steps as constants, which the compiler vectorizes */    \
            for (int64_t i = 0; i < length; ++i) out[i] = in[-i];                                  \
        else if (step == 0) { /* a broadcast dimension: a fill */                                  \
            const TYPE value = in[0];                                                              \
            for (int64_t i = 0; i < length; ++i) out[i] = value;                                   \
        } else if (step == 2)                                                                      \
            for (int64_t i = 0; i < length; ++i) out[i] = in[2 * i];                               \
        else                                                                                       \
            for (int64_t i = 0; i < length; ++i) out[i] = in[i * step];                            \
    }                                                                                              \
    static void transpose_plane_##TYPE(const TYPE *in, TYPE *out, int64_t extent_p,               \
                                       int64_t extent_q, int64_t src_p, int64_t src_q,            \
                                       int64_t dst_p)                                             \
    {                                                                                              \
        for (int64_t p0 = 0; p0 < extent_p; p0 += CPU_TILE_EDGE) {                                 \
            const int64_t p1 = extent_p - p0 < CPU_TILE_EDGE ? extent_p : p0 + CPU_TILE_EDGE;      \
            for (int64_t q0 = 0; q0 < extent_q; q0 += CPU_TILE_EDGE) {                             \
                const int64_t q1 = extent_q - q0 < CPU_TILE_EDGE ? extent_q : q0 + CPU_TILE_EDGE;  \
                for (int64_t p = p0; p < p1; ++p)                                                  \
                    for (int64_t q = q0; q < q1; ++q) out[p * dst_p + q] = in[p * src_p + q * src_q]; \
            }                                                                                      \
        }                                                                                          \
    }
GP_COPY_LOOPS(uint8_t)
GP_COPY_LOOPS(uint16_t)
GP_COPY_LOOPS(uint32_t)
GP_COPY_LOOPS(uint64_t)
#undef GP_COPY_LOOPS

/* out[i] = in[i * step] for elements of `size` bytes. */
static void copy_row(const void *in, void *out, int64_t length, int64_t step, int64_t size)
{
    switch (size) {
    case 1: copy_row_uint8_t(in, out, length, step); break;
    case 2: copy_row_uint16_t(in, out, length, step); break;
    case 4: copy_row_uint32_t(in, out, length, step); break;
    default: copy_row_uint64_t(in, out, length, step); break;
    }
}

typedef struct {
    gp_copy_args copy; /* simplified */
    const char *in;
    char *out;
    int tile_axis;
    int64_t dst_strides[GP_MAX_DIMS];
    int outer_ndim;                 /* the dimensions outside the row or plane */
    int64_t outer_shape[GP_MAX_DIMS], outer_src[GP_MAX_DIMS], outer_dst[GP_MAX_DIMS];
    int64_t pieces;                 /* rows or planes */
    int64_t strips;                 /* tasks per piece */
    int64_t tasks;
    int parts;
    gp_transpose_fn transpose;      /* the vector tile transpose, when the source suits it */
} copy_job;

/* The element offsets of piece `piece` (the odometer over the outer dimensions, read at once). */
static void piece_offsets(const copy_job *job, int64_t piece, int64_t *src, int64_t *dst)
{
    *src = *dst = 0;
    for (int d = job->outer_ndim - 1; d >= 0; --d) {
        const int64_t index = piece % job->outer_shape[d];
        piece /= job->outer_shape[d];
        *src += index * job->outer_src[d];
        *dst += index * job->outer_dst[d];
    }
}

/* Task t: strip t % strips of piece t / strips. */
static void copy_task(const copy_job *job, int64_t task)
{
    const gp_copy_args *c = &job->copy;
    const int last = c->ndim - 1;
    const int64_t size = c->elem_size, piece = task / job->strips, strip = task % job->strips;
    int64_t src, dst;
    piece_offsets(job, piece, &src, &dst);
    if (job->tile_axis < 0) { /* a row: elements [first, first + count) of it */
        const int64_t first = strip * ROW_CHUNK, left = c->shape[last] - first;
        const int64_t count = left < ROW_CHUNK ? left : ROW_CHUNK;
        const void *in = job->in + (src + first * c->strides[last]) * size;
        copy_row(in, job->out + (dst + first) * size, count, c->strides[last], size);
        return;
    }
    /* a plane: tile-axis elements [first, first + count) of it */
    const int axis = job->tile_axis;
    const int64_t first = strip * STRIP, left = c->shape[axis] - first;
    const int64_t count = left < STRIP ? left : STRIP;
    const int64_t src_p = c->strides[axis], src_q = c->strides[last], dst_p = job->dst_strides[axis];
    const void *in = job->in + (src + first * src_p) * size;
    void *out = job->out + (dst + first * dst_p) * size;
    if (job->transpose != NULL) {
        job->transpose(in, out, count, c->shape[last], src_q, dst_p);
        return;
    }
    switch (size) {
    case 1: transpose_plane_uint8_t(in, out, count, c->shape[last], src_p, src_q, dst_p); break;
    case 2: transpose_plane_uint16_t(in, out, count, c->shape[last], src_p, src_q, dst_p); break;
    case 4: transpose_plane_uint32_t(in, out, count, c->shape[last], src_p, src_q, dst_p); break;
    default: transpose_plane_uint64_t(in, out, count, c->shape[last], src_p, src_q, dst_p); break;
    }
}

static void copy_range(void *ctx, int64_t first, int64_t last)
{
    for (int64_t task = first; task < last; ++task) copy_task(ctx, task);
}

void gp_cpu_gather(const gp_copy_args *view, const char *in, int64_t first, int64_t count, void *out)
{
    const int last = view->ndim - 1;
    const int64_t size = view->elem_size;
    int64_t index[GP_MAX_DIMS], offset = 0;
    for (int d = last; d >= 0; --d) { /* first's index, the last dimension fastest */
        index[d] = first % view->shape[d];
        first /= view->shape[d];
        offset += index[d] * view->strides[d];
    }
    char *to = out;
    while (count > 0) {
        const int64_t run = view->shape[last] - index[last] < count ? view->shape[last] - index[last] : count;
        const char *from = in + offset * size;
        copy_row(from, to, run, view->strides[last], size);
        to += run * size;
        count -= run;
        offset += (run - 1) * view->strides[last]; /* at the run's last element; step to the next */
        index[last] += run - 1;
        for (int d = last; d >= 0; --d) { /* the odometer */
            if (++index[d] < view->shape[d]) {
                offset += view->strides[d];
                break;
            }
            offset -= (view->shape[d] - 1) * view->strides[d];
            index[d] = 0;
        }
    }
}

char *gp_cpu_piece_buffer(const gp_copy_args *view, atomic_int *out_of_memory)
{
    if (view == NULL) return NULL;
    char *buffer = malloc((size_t)(GP_CPU_PIECE * view->elem_size));
    if (buffer == NULL) atomic_store(out_of_memory, 1);
    return buffer;
}

int gp_cpu_copy(const gp_call *call, gp_error *err)
{
    if (call->copy.elem_size != 1 && call->copy.elem_size != 2 && call->copy.elem_size != 4 && call->copy.elem_size != 8)
        return gp_fail(err, GP_ERR_INVALID, "strided copy: element size must be 1, 2, 4 or 8 bytes");
    copy_job job = {.copy = call->copy, .in = call->in, .out = call->out};
    gp_copy_args *c = &job.copy;
    gp_copy_simplify(c, call->in, call->out);
    const int64_t count = gp_copy_count(c);
    if (count == 0) return 0;
    const int last = c->ndim - 1;
    if (last < 0 || (last == 0 && c->strides[0] == 1)) { /* the layout is kept: one run */
        memcpy(call->out, call->in, (size_t)(count * c->elem_size));
        return 0;
    }
    job.dst_strides[last] = 1;
    for (int d = last - 1; d >= 0; --d) job.dst_strides[d] = job.dst_strides[d + 1] * c->shape[d + 1];
    job.tile_axis = gp_copy_tile_axis(c);
    for (int d = 0; d < last; ++d) {
        if (d == job.tile_axis) continue;
        job.outer_shape[job.outer_ndim] = c->shape[d];
        job.outer_src[job.outer_ndim] = c->strides[d];
        job.outer_dst[job.outer_ndim] = job.dst_strides[d];
        ++job.outer_ndim;
    }
    job.pieces = 1;
    for (int d = 0; d < job.outer_ndim; ++d) job.pieces *= job.outer_shape[d];
    if (job.tile_axis < 0) {
        job.strips = (c->shape[last] + ROW_CHUNK - 1) / ROW_CHUNK;
    } else {
        job.strips = (c->shape[job.tile_axis] + STRIP - 1) / STRIP;
        if (c->strides[job.tile_axis] == 1) job.transpose = gp_cpu_kernels_get()->transpose[gp_transpose_index(c->elem_size)];
    }
    job.tasks = job.pieces * job.strips;
    job.parts = gp_cpu_parts((double)count * (double)c->elem_size, job.tasks);
    gp_pool_for(job.parts, job.tasks, gp_cpu_grain((double)count * (double)c->elem_size / (double)job.tasks, job.tasks, job.parts), copy_range,
                &job);
    return 0;
}
