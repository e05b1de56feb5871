/* Layout helpers for gp_copy_desc, shared by the C glue and both backends.
 *
 * Both backends first reduce a copy to its fewest dimensions: size-1 dimensions are dropped, output
 * neighbours that stay adjacent in the source are merged, and a source-contiguous last dimension is
 * folded into wider words.  A copy that keeps the layout ends as one contiguous run. */
#ifndef GP_COPY_LAYOUT_H
#define GP_COPY_LAYOUT_H

#include <stdint.h>

#include "contract/gp_call.h"

static inline int64_t gp_copy_count(const gp_copy_args *desc)
{
    int64_t count = 1;
    for (int d = 0; d < desc->ndim; ++d) count *= desc->shape[d];
    return count;
}

/* The elements the source view spans: from element `*lowest` (<= 0) relative to desc->in, `*extent`
 * elements long (0 for an empty view).  Zero strides make the span shorter than the count. */
static inline void gp_copy_span(const gp_copy_args *desc, int64_t *lowest, int64_t *extent)
{
    int64_t low = 0, high = 0;
    for (int d = 0; d < desc->ndim; ++d) {
        const int64_t reach = (desc->shape[d] - 1) * desc->strides[d];
        if (reach < 0) low += reach;
        else high += reach;
    }
    *lowest = low;
    *extent = gp_copy_count(desc) == 0 ? 0 : high - low + 1;
}

/* Drops size-1 dimensions and merges dimension d into d-1 when the source keeps them adjacent
 * (strides[d-1] == strides[d] * shape[d]), which includes neighbouring zero strides.  The copy
 * stays the same; an empty view is left as it is. */
static inline void gp_copy_merge(gp_copy_args *desc)
{
    if (gp_copy_count(desc) == 0) return;
    int kept = 0;
    for (int d = 0; d < desc->ndim; ++d) {
        if (desc->shape[d] == 1) continue;
        if (kept > 0 && desc->strides[kept - 1] == desc->strides[d] * desc->shape[d]) {
            desc->shape[kept - 1] *= desc->shape[d];
            desc->strides[kept - 1] = desc->strides[d];
        } else {
            desc->shape[kept] = desc->shape[d];
            desc->strides[kept] = desc->strides[d];
            ++kept;
        }
    }
    desc->ndim = kept;
}

/* When the last dimension is contiguous in the source too, moves its elements as the widest word
 * (up to 8 bytes) that every row start and both base addresses are aligned to.  A last dimension
 * that fits in one word disappears: an (n, m, 4) uint8 permutation becomes a 2-D uint32 one. */
static inline void gp_copy_widen(gp_copy_args *desc, const void *in, const void *out)
{
    const int last = desc->ndim - 1;
    if (last < 0 || desc->strides[last] != 1) return;
    for (int64_t word = 8; word > desc->elem_size; word /= 2) {
        int fits = (desc->shape[last] * desc->elem_size) % word == 0 &&
                   (uintptr_t)in % (uintptr_t)word == 0 && (uintptr_t)out % (uintptr_t)word == 0;
        for (int d = 0; d < last; ++d) fits = fits && (desc->strides[d] * desc->elem_size) % word == 0;
        if (!fits) continue;
        const int64_t ratio = word / desc->elem_size;
        desc->shape[last] /= ratio;
        for (int d = 0; d < last; ++d) desc->strides[d] /= ratio;
        desc->elem_size = word;
        gp_copy_merge(desc);
        return;
    }
}

/* The simplest equivalent copy: merged, then widened. */
static inline void gp_copy_simplify(gp_copy_args *desc, const void *in, const void *out)
{
    gp_copy_merge(desc);
    gp_copy_widen(desc, in, out);
}

/* The dimension a tiled transpose pairs with the last one: the one with the smallest nonzero source
 * stride, when that is smaller than the last dimension's, so that reading along it is closer to
 * contiguous.  -1 when the last dimension is already the best one to read along (or is broadcast). */
static inline int gp_copy_tile_axis(const gp_copy_args *desc)
{
    const int last = desc->ndim - 1;
    if (last < 1 || desc->strides[last] == 0) return -1;
    int best = -1;
    int64_t best_stride = desc->strides[last] < 0 ? -desc->strides[last] : desc->strides[last];
    for (int d = 0; d < last; ++d) {
        const int64_t stride = desc->strides[d] < 0 ? -desc->strides[d] : desc->strides[d];
        if (stride != 0 && stride < best_stride) {
            best = d;
            best_stride = stride;
        }
    }
    return best;
}

#endif
