/* The CPU backend of the strided copy (and so of transpose).
 *
 * After gp_copy_simplify(), the copy is a loop over "outer" dimensions around either
 *   - a row copy along the last dimension (when it is the best one to read along), or
 *   - a 2-D transpose between the last dimension and gp_copy_tile_axis(), walked in square tiles
 *     small enough that the tile's source and destination cache lines stay in L1 while it is
 *     copied (a naive column walk misses the cache on every element). */
#include <string.h>

#include "contract/copy_layout.h"
#include "cpu/cpu_backend.h"

/* Tile edge in elements: 32 x 32 was the fastest of 16 to 128 for 1- to 8-byte elements (8192^2 on
 * an x86-64 host: 75-107 ms against 115-130 ms for 64 x 64). */
enum { CPU_TILE_EDGE = 32 };

/* Typed loops for each element size.  rows: out[i] = in[i * step].  tiles: the plane
 * out[p * dst_p + q] = in[p * src_p + q * src_q], p < extent_p, q < extent_q, tile by tile. */
#define GP_COPY_LOOPS(TYPE)                                                                        \
    static void copy_row_##TYPE(const TYPE *in, TYPE *out, int64_t length, int64_t step)          \
    {                                                                                              \
        for (int64_t i = 0; i < length; ++i) out[i] = in[i * step];                                \
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

/* Odometer over the dimensions outside the row or plane, tracking both offsets (in elements). */
typedef struct {
    int ndim;
    int64_t shape[GP_MAX_DIMS], src[GP_MAX_DIMS], dst[GP_MAX_DIMS], index[GP_MAX_DIMS];
    int64_t src_offset, dst_offset;
} outer_walk;

static int outer_next(outer_walk *walk)
{
    for (int d = walk->ndim - 1; d >= 0; --d) {
        walk->src_offset += walk->src[d];
        walk->dst_offset += walk->dst[d];
        if (++walk->index[d] < walk->shape[d]) return 1;
        walk->src_offset -= walk->shape[d] * walk->src[d];
        walk->dst_offset -= walk->shape[d] * walk->dst[d];
        walk->index[d] = 0;
    }
    return 0;
}

/* One row or plane of the copy at the given element offsets. */
static void copy_piece(const gp_copy_args *copy, const void *source, void *target, int tile_axis,
                       const int64_t *dst_strides, int64_t src_offset, int64_t dst_offset)
{
    const int last = copy->ndim - 1;
    const int64_t size = copy->elem_size;
    const void *in = (const char *)source + src_offset * size;
    void *out = (char *)target + dst_offset * size;
    switch (size) {
#define GP_COPY_CASE(SIZE, TYPE)                                                                   \
    case SIZE:                                                                                     \
        if (tile_axis < 0)                                                                         \
            copy_row_##TYPE(in, out, copy->shape[last], copy->strides[last]);                      \
        else                                                                                       \
            transpose_plane_##TYPE(in, out, copy->shape[tile_axis], copy->shape[last],             \
                                   copy->strides[tile_axis], copy->strides[last],                  \
                                   dst_strides[tile_axis]);                                        \
        break;
        GP_COPY_CASE(1, uint8_t)
        GP_COPY_CASE(2, uint16_t)
        GP_COPY_CASE(4, uint32_t)
        GP_COPY_CASE(8, uint64_t)
#undef GP_COPY_CASE
    default: break;
    }
}

int gp_cpu_copy(const gp_call *call, gp_error *err)
{
    if (call->copy.elem_size != 1 && call->copy.elem_size != 2 && call->copy.elem_size != 4 && call->copy.elem_size != 8)
        return gp_fail(err, GP_ERR_INVALID, "strided copy: element size must be 1, 2, 4 or 8 bytes");
    gp_copy_args copy = call->copy;
    gp_copy_simplify(&copy, call->in, call->out);
    const int64_t count = gp_copy_count(&copy);
    if (count == 0) return 0;
    const int last = copy.ndim - 1;
    if (last < 0 || (last == 0 && copy.strides[0] == 1)) { /* the layout is kept: one run */
        memcpy(call->out, call->in, (size_t)(count * copy.elem_size));
        return 0;
    }
    int64_t dst_strides[GP_MAX_DIMS];
    dst_strides[last] = 1;
    for (int d = last - 1; d >= 0; --d) dst_strides[d] = dst_strides[d + 1] * copy.shape[d + 1];

    const int tile_axis = gp_copy_tile_axis(&copy);
    outer_walk walk = {0};
    for (int d = 0; d < last; ++d) {
        if (d == tile_axis) continue;
        walk.shape[walk.ndim] = copy.shape[d];
        walk.src[walk.ndim] = copy.strides[d];
        walk.dst[walk.ndim] = dst_strides[d];
        ++walk.ndim;
    }
    do {
        copy_piece(&copy, call->in, call->out, tile_axis, dst_strides, walk.src_offset, walk.dst_offset);
    } while (outer_next(&walk));
    return 0;
}
