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
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "contract/copy_layout.h"
#include "cpu/cpu_backend.h"
#include "cpu/kernels.h"
#include "cpu/parallel.h"

/* Tile edge in elements of the strided walk: 32 x 32 was the fastest of 16 to 128 for 1- to 8-byte
 * elements (8192^2 on an x86-64 host). */
enum { CPU_TILE_EDGE = 32 };
enum { STRIP = 64 };          /* tile-axis elements per task of a transpose (the kernels' macro tile) */
enum { ROW_CHUNK = 16384 };   /* elements per task of a row copy */
enum { BOUNCE_BYTES = 4096 };  /* a streaming gather's row pieces pass through this much of L1 */

/* Typed loops for each element size.  rows: out[i] = in[i * step].  tiles: the plane
 * out[p * dst_p + q] = in[p * src_p + q * src_q], p < extent_p, q < extent_q, tile by tile. */
#define GP_COPY_LOOPS(TYPE)                                                                        \
    static void copy_row_##TYPE(const TYPE *restrict in, TYPE *restrict out, int64_t length, int64_t step) \
    {                                                                                              \
        if (step == -1) /* the common steps as constants, which the compiler vectorizes */         \
            for (int64_t i = 0; i < length; ++i) out[i] = in[-i];                                  \
        else if (step == 2)                                                                        \
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

/* memcpy through non-temporal stores where the CPU has them (x86-64: 16-byte ones from out's first
 * 16-byte boundary, the ends by memcpy).  They write whole lines without reading them into the
 * cache first: for a destination no CPU reads again soon, one memory pass instead of two. */
static void stream_bytes(char *out, const char *in, int64_t bytes)
{
#if defined(__SSE2__)
    const int64_t head = (int64_t)((16 - (uintptr_t)out % 16) % 16);
    if (bytes <= head) {
        memcpy(out, in, (size_t)bytes);
        return;
    }
    memcpy(out, in, (size_t)head);
    int64_t i = head;
    for (; i + 16 <= bytes; i += 16)
        _mm_stream_si128((__m128i *)(void *)(out + i), _mm_loadu_si128((const __m128i *)(const void *)(in + i)));
    memcpy(out + i, in + i, (size_t)(bytes - i));
#else
    memcpy(out, in, (size_t)bytes);
#endif
}

/* Orders the thread's non-temporal stores before whatever it does next (its completion signal). */
static void stream_fence(void)
{
#if defined(__SSE2__)
    _mm_sfence();
#endif
}

/* copy_row into memory written by stream_bytes: a contiguous row directly, any other through an
 * L1-resident bounce buffer. */
static void stream_row(const char *in, char *out, int64_t length, int64_t step, int64_t size)
{
    if (step == 1) {
        stream_bytes(out, in, length * size);
        return;
    }
    _Alignas(64) char bounce[BOUNCE_BYTES];
    const int64_t per_bounce = BOUNCE_BYTES / size;
    for (int64_t done = 0; done < length; done += per_bounce) {
        const int64_t count = length - done < per_bounce ? length - done : per_bounce;
        copy_row(in + done * step * size, bounce, count, step, size);
        stream_bytes(out + done * size, bounce, count * size);
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

/* gp_cpu_gather, its stores non-temporal when `streaming` (stream_row). */
static void gather(const gp_copy_args *view, const char *in, int64_t first, int64_t count, char *out, int streaming)
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
        if (streaming) stream_row(from, to, run, view->strides[last], size);
        else copy_row(from, to, run, view->strides[last], size);
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

void gp_cpu_gather(const gp_copy_args *view, const char *in, int64_t first, int64_t count, void *out)
{
    gather(view, in, first, count, out, 0);
}

void gp_cpu_gather_streaming(const gp_copy_args *view, const char *in, int64_t first, int64_t count, void *out)
{
    gather(view, in, first, count, out, 1);
    stream_fence();
}

void gp_cpu_copy_streaming(void *out, const void *in, int64_t bytes)
{
    stream_bytes(out, in, bytes);
    stream_fence();
}

char *gp_cpu_piece_buffer(const gp_copy_args *view, atomic_int *out_of_memory)
{
    if (view == NULL) return NULL;
    char *buffer = malloc((size_t)(GP_CPU_PIECE * view->elem_size));
    if (buffer == NULL) atomic_store(out_of_memory, 1);
    return buffer;
}

/* The transpose table's index of an element size (1, 2, 4 or 8). */
static int size_index(int64_t size) { return size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3; }

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
        if (c->strides[job.tile_axis] == 1) job.transpose = gp_cpu_kernels_get()->transpose[size_index(c->elem_size)];
    }
    job.tasks = job.pieces * job.strips;
    job.parts = gp_cpu_parts((double)count * (double)c->elem_size, job.tasks);
    gp_pool_for(job.parts, job.tasks, gp_cpu_grain((double)count * (double)c->elem_size / (double)job.tasks, job.tasks, job.parts), copy_range,
                &job);
    return 0;
}
