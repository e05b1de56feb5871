// The streamed correlation of host images (the engine's Tiler for correlate, see
// streaming/engine.cuh).
//
// Tiles are blocks of the output: runs of whole output rows while a tile of them, with the mask's
// halo, fits a chunk, else blocks of rows by columns (1-D signals, which are one row, and very wide
// images).  Each tile's input is the part of the image its windows read, halo included, packed in
// the slot, and its launch is the resident correlation of that part with the offsets and lengths
// that make it read exactly what the whole image's launch would (cut_axis).  The kernels and the
// call's arguments are those of the resident form.
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "correlate/correlate.cuh"
#include "primitives.cuh"
#include "streaming/engine.cuh"

namespace gp {
namespace {

// Along one axis of a correlation's image (rows or columns): the image's length, the mask's
// extent, the offset of the first window and the result's length.
struct CorrelateAxis {
    int64_t length, mask, offset, out_length;

    // The image steps a tile of `count` results reads along the axis (at most).
    int64_t in_steps(int64_t count) const { return count == out_length ? length : count + mask - 1; }
};

// What a tile of results [first, first + count) along an axis reads: runs of image steps (first,
// steps), packed one after another, and the image its launch sees along the axis: `length` steps,
// read from `offset` on.
struct AxisCut {
    std::vector<std::pair<int64_t, int64_t>> runs;
    int64_t length, offset;
};

// A tile along the whole axis sees the whole image.  Otherwise windows that stay inside the image,
// or reach past it under the fill rule, read the image's part they overlap, at an offset (the
// launch reads the fill value past that part, exactly where the whole image ends); under wrap and
// symm, the steps the rule reads are gathered in the order the windows read them, so that the
// launch never reads past its own tile.
AxisCut cut_axis(const CorrelateAxis &axis, gp_boundary boundary, int64_t first, int64_t count)
{
    AxisCut cut;
    const auto add = [&](int64_t from, int64_t steps) {  // appends, merged with an adjacent last run
        if (!cut.runs.empty() && cut.runs.back().first + cut.runs.back().second == from) cut.runs.back().second += steps;
        else cut.runs.emplace_back(from, steps);
    };
    if (first == 0 && count == axis.out_length) {
        add(0, axis.length);
        cut.length = axis.length;
        cut.offset = axis.offset;
        return cut;
    }
    const int64_t lo = first + axis.offset, hi = lo + count + axis.mask - 1;  // the steps the windows read
    const int64_t begin = std::max<int64_t>(lo, 0), end = std::min(hi, axis.length);
    if (boundary == GP_BOUNDARY_FILL || (lo >= 0 && hi <= axis.length)) {
        const int64_t step = lo >= axis.length ? axis.length - 1 : 0;  // no overlap: one step every read misses
        add(begin < end ? begin : step, begin < end ? end - begin : 1);
        cut.length = cut.runs[0].second;
        cut.offset = lo - cut.runs[0].first;
        return cut;
    }
    for (int64_t x = lo; x < std::min<int64_t>(hi, 0); ++x) add(gp_boundary_index(x, axis.length, boundary), 1);
    if (begin < end) add(begin, end - begin);
    for (int64_t x = std::max(lo, axis.length); x < hi; ++x) add(gp_boundary_index(x, axis.length, boundary), 1);
    cut.length = hi - lo;
    cut.offset = 0;
    return cut;
}

// The boxes of the image (1, rows, cols) a tile is packed from, row-major: a box per run of rows
// when the tile reads one run of columns, else a box per row and run of columns.
void correlate_tile_boxes(const AxisCut &rows, const AxisCut &cols, Boxes *input)
{
    input->clear();
    for (const auto &row_run : rows.runs) {
        if (cols.runs.size() == 1) {
            input->push_back({0, 1, row_run.first, row_run.second, cols.runs[0].first, cols.runs[0].second});
            continue;
        }
        for (int64_t row = row_run.first; row < row_run.first + row_run.second; ++row)
            for (const auto &col_run : cols.runs) input->push_back({0, 1, row, 1, col_run.first, col_run.second});
    }
}

// Tiles of h x w results, row-major over the output.
class CorrelateTiler final : public Tiler {
  public:
    CorrelateTiler(const gp_correlate_args &args, const Layout &layout, const CorrelateAxis &rows,
                   const CorrelateAxis &cols, int64_t h, int64_t w)
        : Tiler(layout), args_(args), rows_(rows), cols_(cols), h_(h), w_(w)
    {
    }

    bool next(Tile *tile) override
    {
        if (row_ >= rows_.out_length) return false;
        tile->box = {0, 1, row_, std::min(h_, rows_.out_length - row_), col_, std::min(w_, cols_.out_length - col_)};
        correlate_tile_boxes(cut_axis(rows_, args_.boundary, row_, tile->box.k_count),
                             cut_axis(cols_, args_.boundary, col_, tile->box.i_count), &tile->input);
        if ((col_ += w_) >= cols_.out_length) {
            col_ = 0;
            row_ += h_;
        }
        return true;
    }

    int compute(int device, const Box &box, const void *device_in, void *device_out, Box *out_box,
                gp_error *err) override
    {
        const AxisCut row_cut = cut_axis(rows_, args_.boundary, box.k0, box.k_count);
        const AxisCut col_cut = cut_axis(cols_, args_.boundary, box.i0, box.i_count);
        gp_correlate_args tile = args_;
        tile.rows = row_cut.length;
        tile.row_offset = row_cut.offset;
        tile.out_rows = box.k_count;
        tile.cols = col_cut.length;
        tile.col_offset = col_cut.offset;
        tile.out_cols = box.i_count;
        *out_box = box;
        return launch_correlate(device, tile, device_in, device_out, err);
    }

  private:
    gp_correlate_args args_;
    CorrelateAxis rows_, cols_;
    int64_t h_, w_;  // results per tile along the rows and the columns
    int64_t row_ = 0, col_ = 0;
};

}  // namespace

std::unique_ptr<Tiler> correlate_tiler(const gp_call &call, const gp_plan &plan, gp_error *err)
{
    const gp_correlate_args &args = call.correlate;
    const int64_t elem = gp_dtype_size(args.dtype);
    const CorrelateAxis rows{args.rows, args.mask_rows, args.row_offset, args.out_rows};
    const CorrelateAxis cols{args.cols, args.mask_cols, args.col_offset, args.out_cols};
    const auto slot_elements = [&](int64_t h, int64_t w) { return rows.in_steps(h) * cols.in_steps(w) + h * w; };
    // Tiles of `chunk` input elements, halved (rows first while they are whole, else the longer
    // side) until a slot fits.
    const TileLimits limits = tile_limits(plan.stream, elem, args.rows * args.cols);
    int64_t h = 1, w = cols.out_length;
    if (rows.mask * cols.in_steps(w) <= limits.chunk) {
        h = std::min(rows.out_length, std::max<int64_t>(1, limits.chunk / cols.in_steps(w) - rows.mask + 1));
    } else {
        const int64_t side = static_cast<int64_t>(std::sqrt(static_cast<double>(limits.chunk)));
        h = std::min(rows.out_length, std::max<int64_t>(1, side - rows.mask + 1));
        w = std::min(cols.out_length, std::max<int64_t>(1, limits.chunk / rows.in_steps(h) - cols.mask + 1));
    }
    while (slot_elements(h, w) > limits.slot && (h > 1 || w > 1))
        ((h > 1 && w == cols.out_length) || h >= w ? h : w) /= 2;
    if (slot_elements(h, w) > limits.slot) {
        too_small_for_a_tile(err);
        return nullptr;
    }
    const Tiler::Layout layout{host_view(call.in, 1, args.rows, args.cols, elem, plan.input_pinned),
                               host_view(call.out, 1, args.out_rows, args.out_cols, elem, plan.result_pinned),
                               static_cast<size_t>(rows.in_steps(h) * cols.in_steps(w) * elem),
                               static_cast<size_t>(h * w * elem)};
    return make_tiler<CorrelateTiler>(err, args, layout, rows, cols, h, w);
}

}  // namespace gp
