// The streamed copy of strided host views (the engine's Tiler for copy, see streaming/engine.cuh).
//
// Transpose streams blocks of its output: a range of steps along s, the dimension of the largest
// source stride, by a range along p, the dimension of the next largest, by all of the others.  Each
// step along s reads one run of the source (the span of its range along p), and the block's result
// is runs of the output; square blocks keep both kinds of runs long, as the copy engines need
// (2-D copies of runs under 8 KiB run at half speed or less on the H200 machine).  A short s
// makes panels: blocks of all of p.  Sources whose steps along s overlap (zero or overlapping
// strides) stream as panels, each read as one run of the source.  A block's launch is the resident
// copy of its packed source with the strides of the packed form.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "contract/copy_layout.h"
#include "copy/copy.cuh"
#include "primitives.cuh"
#include "streaming/engine.cuh"

namespace gp {
namespace {

struct Span {
    int64_t lowest, extent;
};

// The span of `copy` (see gp_copy_span) with its dimension s cut to s_steps and p (unless < 0) to
// p_steps.
Span cut_span(gp_copy_args copy, int s, int64_t s_steps, int p, int64_t p_steps)
{
    copy.shape[s] = s_steps;
    if (p >= 0) copy.shape[p] = p_steps;
    Span span;
    gp_copy_span(&copy, &span.lowest, &span.extent);
    return span;
}

// A block of the output: steps [s0, s0 + s_count) along s by [p0, p0 + p_count) along p.
struct Block {
    int64_t s0, s_count, p0, p_count;
};

// A copy as its streamed form sees it: merged, its dimensions s and p, and how the source and the
// output are seen by the engine.
struct CopyGeometry {
    gp_copy_args copy;
    int s, p;  // p < 0: none (the steps along s overlap, or s is the only dimension)
    int64_t s_stride, p_stride, s_len, p_len;
    int64_t rest;      // output elements per (s, p) step
    Span whole, step;  // the spans of the whole source and of one step along s
    bool apart;        // each step along s reads its own run of the source
    // The output seen as (a, b, c): the dimensions before the first cut one, from it to the second
    // (with p < 0, a size-1 dimension past the last), from the second on.
    int first_cut, second_cut;
    int64_t a, b_unit, c_unit;

    explicit CopyGeometry(const gp_copy_args &args) : copy(args)
    {
        gp_copy_merge(&copy);
        if (copy.ndim == 0) copy = gp_copy_args{1, copy.elem_size, {1}, {0}};
        s = 0;
        for (int d = 1; d < copy.ndim; ++d)
            if (std::abs(copy.strides[d]) > std::abs(copy.strides[s])) s = d;
        s_stride = copy.strides[s];
        whole = cut_span(copy, s, copy.shape[s], -1, 0);
        step = cut_span(copy, s, 1, -1, 0);
        apart = step.extent <= std::abs(s_stride);
        p = -1;
        for (int d = 0; apart && d < copy.ndim; ++d)
            if (d != s && (p < 0 || std::abs(copy.strides[d]) > std::abs(copy.strides[p]))) p = d;
        p_stride = p < 0 ? 0 : copy.strides[p];
        s_len = copy.shape[s];
        p_len = p < 0 ? 1 : copy.shape[p];
        rest = gp_copy_count(&copy) / (s_len * p_len);
        first_cut = p < 0 ? s : std::min(s, p);
        second_cut = p < 0 ? copy.ndim : std::max(s, p);
        a = b_unit = c_unit = 1;
        for (int d = 0; d < copy.ndim; ++d) (d < first_cut ? a : d < second_cut ? b_unit : c_unit) *= copy.shape[d];
        b_unit /= copy.shape[first_cut];
        if (second_cut < copy.ndim) c_unit /= copy.shape[second_cut];
    }

    // The source elements a block of s_steps x p_steps reads.
    int64_t in_elements(int64_t s_steps, int64_t p_steps) const
    {
        return apart ? s_steps * cut_span(copy, s, 1, p, p_steps).extent : cut_span(copy, s, s_steps, -1, 0).extent;
    }
    // What one block's input and result take in a slot.
    int64_t slot_elements(int64_t s_steps, int64_t p_steps) const
    {
        return in_elements(s_steps, p_steps) + s_steps * p_steps * rest;
    }

    // The source seen as rows of |s_stride| elements, one per step along s (the lowest address
    // first), or, when steps overlap, as one row; `in` is the call's (element (0, ..., 0)).
    HostView source(const void *in, bool pinned) const
    {
        const char *base = static_cast<const char *>(in) + whole.lowest * copy.elem_size;
        return host_view(base, 1, apart ? s_len : 1, apart ? std::abs(s_stride) : whole.extent, copy.elem_size, pinned);
    }
    HostView output(void *out, bool pinned) const
    {
        return host_view(out, a, copy.shape[first_cut] * b_unit,
                         (second_cut < copy.ndim ? copy.shape[second_cut] : 1) * c_unit, copy.elem_size, pinned);
    }

    Box output_box(const Block &block) const
    {
        const bool s_first = first_cut == s;
        return Box{0, a, (s_first ? block.s0 : block.p0) * b_unit, (s_first ? block.s_count : block.p_count) * b_unit,
                   (s_first ? block.p0 : block.s0) * c_unit, (s_first ? block.p_count : block.s_count) * c_unit};
    }
    Block block_of(const Box &box) const
    {
        const bool s_first = first_cut == s;
        const int64_t k0 = box.k0 / b_unit, k_count = box.k_count / b_unit;
        const int64_t i0 = box.i0 / c_unit, i_count = box.i_count / c_unit;
        return s_first ? Block{k0, k_count, i0, i_count} : Block{i0, i_count, k0, k_count};
    }
};

// Blocks of s_block x p_block steps, walked along p, then along s.
class CopyTiler final : public Tiler {
  public:
    CopyTiler(const CopyGeometry &geometry, const Layout &layout, int64_t s_block, int64_t p_block)
        : Tiler(layout), g_(geometry), s_block_(s_block), p_block_(p_block)
    {
    }

    bool next(Tile *tile) override
    {
        if (at_.s0 >= g_.s_len) return false;
        const Block block{at_.s0, std::min(s_block_, g_.s_len - at_.s0), at_.p0, std::min(p_block_, g_.p_len - at_.p0)};
        tile->box = g_.output_box(block);
        if (g_.apart) {
            const Span run = cut_span(g_.copy, g_.s, 1, g_.p, block.p_count);
            const int64_t row = g_.s_stride > 0 ? block.s0 : g_.s_len - block.s0 - block.s_count;
            tile->input.assign(1, Box{0, 1, row, block.s_count, block.p0 * g_.p_stride + run.lowest - g_.step.lowest,
                                      run.extent});
        } else {
            const Span run = cut_span(g_.copy, g_.s, block.s_count, -1, 0);
            tile->input.assign(1, Box{0, 1, 0, 1, block.s0 * g_.s_stride + run.lowest - g_.whole.lowest, run.extent});
        }
        if ((at_.p0 += block.p_count) >= g_.p_len) {
            at_.p0 = 0;
            at_.s0 += block.s_count;
        }
        return true;
    }

    // A block's source on the device: its runs packed one after another (the lowest address
    // first), or its one run.
    int compute(int, const Box &box, const void *device_in, void *device_out, Box *out_box, gp_error *err) override
    {
        const Block block = g_.block_of(box);
        gp_copy_args tile = g_.copy;
        tile.shape[g_.s] = block.s_count;
        if (g_.p >= 0) tile.shape[g_.p] = block.p_count;
        int64_t first_element;  // where element (0, ..., 0) of the block lies in the packed source
        if (g_.apart) {
            const Span run = cut_span(g_.copy, g_.s, 1, g_.p, block.p_count);
            tile.strides[g_.s] = g_.s_stride > 0 ? run.extent : -run.extent;
            first_element = (g_.s_stride > 0 ? 0 : (block.s_count - 1) * run.extent) - run.lowest;
        } else {
            first_element = -cut_span(g_.copy, g_.s, block.s_count, -1, 0).lowest;
        }
        *out_box = box;
        return launch_copy(tile, static_cast<const char *>(device_in) + first_element * tile.elem_size, device_out,
                           err);
    }

  private:
    CopyGeometry g_;
    int64_t s_block_, p_block_;
    Block at_{0, 0, 0, 0};
};

}  // namespace

std::unique_ptr<Tiler> copy_tiler(const gp_call &call, const gp_plan &plan, gp_error *err)
{
    const CopyGeometry g(call.copy);
    const int64_t elem = g.copy.elem_size;
    // Block sizes: `chunk` result elements, square or a panel, halved along their longer side until
    // their slots fit the device cap.
    const TileLimits limits = tile_limits(plan.stream, elem, gp_copy_count(&g.copy));
    const int64_t area = std::max<int64_t>(1, limits.chunk / g.rest);
    const int64_t side = std::max<int64_t>(1, static_cast<int64_t>(std::sqrt(static_cast<double>(area))));
    int64_t p_block = std::max<int64_t>(1, std::min(g.p_len, std::max(side, area / g.s_len)));
    int64_t s_block = std::max<int64_t>(1, std::min(g.s_len, area / p_block));
    while (g.slot_elements(s_block, p_block) > limits.slot && (s_block > 1 || p_block > 1))
        (s_block >= p_block ? s_block : p_block) /= 2;
    if (g.slot_elements(s_block, p_block) > limits.slot) {
        too_small_for_a_tile(err);
        return nullptr;
    }
    const Tiler::Layout layout{g.source(call.in, plan.input_pinned), g.output(call.out, plan.result_pinned),
                               static_cast<size_t>(g.in_elements(s_block, p_block) * elem),
                               static_cast<size_t>(s_block * p_block * g.rest * elem)};
    return make_tiler<CopyTiler>(err, g, layout, s_block, p_block);
}

}  // namespace gp
