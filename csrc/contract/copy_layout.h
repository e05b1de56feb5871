/* Layout helpers for a copy's gp_copy_args, shared by the C glue, the planner and both backends.
 *
 * Both backends first reduce a copy to its fewest dimensions: size-1 dimensions are dropped, output
 * neighbours that stay adjacent in the source are merged, and a source-contiguous last dimension is
 * folded into wider words.  A copy that keeps the layout ends as one contiguous run.  Only widening
 * looks at the operands (their alignment), so only it and gp_copy_simplify take them. */
#ifndef GP_COPY_LAYOUT_H
#define GP_COPY_LAYOUT_H

#include <stdint.h>

#include "contract/gp_call.h"

static inline int64_t gp_copy_count(const gp_copy_args *copy)
{
    int64_t count = 1;
    for (int d = 0; d < copy->ndim; ++d) count *= copy->shape[d];
    return count;
}

/* The elements the source view spans: from element `*lowest` (<= 0) relative to the call's in,
 * `*extent` elements long (0 for an empty view).  Zero strides make the span shorter than the
 * count. */
static inline void gp_copy_span(const gp_copy_args *copy, int64_t *lowest, int64_t *extent)
{
    int64_t low = 0, high = 0;
    for (int d = 0; d < copy->ndim; ++d) {
        const int64_t reach = (copy->shape[d] - 1) * copy->strides[d];
        if (reach < 0) low += reach;
        else high += reach;
    }
    *lowest = low;
    *extent = gp_copy_count(copy) == 0 ? 0 : high - low + 1;
}

/* Drops size-1 dimensions and merges dimension d into d-1 when the source keeps them adjacent
 * (strides[d-1] == strides[d] * shape[d]), which includes neighbouring zero strides.  The copy
 * stays the same; an empty view is left as it is. */
static inline void gp_copy_merge(gp_copy_args *copy)
{
    if (gp_copy_count(copy) == 0) return;
    int kept = 0;
    for (int d = 0; d < copy->ndim; ++d) {
        if (copy->shape[d] == 1) continue;
        if (kept > 0 && copy->strides[kept - 1] == copy->strides[d] * copy->shape[d]) {
            copy->shape[kept - 1] *= copy->shape[d];
            copy->strides[kept - 1] = copy->strides[d];
        } else {
            copy->shape[kept] = copy->shape[d];
            copy->strides[kept] = copy->strides[d];
            ++kept;
        }
    }
    copy->ndim = kept;
}

/* When the last dimension is contiguous in the source too, moves its elements as the widest word
 * (up to 8 bytes) that every row start and both operands (the call's in and out) are aligned to.
 * A last dimension that fits in one word disappears: an (n, m, 4) uint8 permutation becomes a 2-D
 * uint32 one. */
static inline void gp_copy_widen(gp_copy_args *copy, const void *in, const void *out)
{
    const int last = copy->ndim - 1;
    if (last < 0 || copy->strides[last] != 1) return;
    for (int64_t word = 8; word > copy->elem_size; word /= 2) {
        int fits = (copy->shape[last] * copy->elem_size) % word == 0 && (uintptr_t)in % (uintptr_t)word == 0 &&
                   (uintptr_t)out % (uintptr_t)word == 0;
        for (int d = 0; d < last; ++d) fits = fits && (copy->strides[d] * copy->elem_size) % word == 0;
        if (!fits) continue;
        const int64_t ratio = word / copy->elem_size;
        copy->shape[last] /= ratio;
        for (int d = 0; d < last; ++d) copy->strides[d] /= ratio;
        copy->elem_size = word;
        gp_copy_merge(copy);
        return;
    }
}

/* The simplest equivalent copy of in to out: merged, then widened. */
static inline void gp_copy_simplify(gp_copy_args *copy, const void *in, const void *out)
{
    gp_copy_merge(copy);
    gp_copy_widen(copy, in, out);
}

/* The dimension a tiled transpose pairs with the last one: the one with the smallest nonzero source
 * stride, when that is smaller than the last dimension's, so that reading along it is closer to
 * contiguous.  -1 when the last dimension is already the best one to read along (or is broadcast). */
static inline int gp_copy_tile_axis(const gp_copy_args *copy)
{
    const int last = copy->ndim - 1;
    if (last < 1 || copy->strides[last] == 0) return -1;
    int best = -1;
    int64_t best_stride = copy->strides[last] < 0 ? -copy->strides[last] : copy->strides[last];
    for (int d = 0; d < last; ++d) {
        const int64_t stride = copy->strides[d] < 0 ? -copy->strides[d] : copy->strides[d];
        if (stride != 0 && stride < best_stride) {
            best = d;
            best_stride = stride;
        }
    }
    return best;
}

#endif
