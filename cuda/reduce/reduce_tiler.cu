// The streamed reduction of host arrays (the engine's Tiler for reduce, see streaming/engine.cuh).
//
// Tiles are SlabWalk's: whole outer slabs when one fits a tile, else runs of rows of one slab
// along n (column blocks of rows that are too long).  A tile of whole slabs reduces straight into
// its out slot.  Where the slabs are cut along n, each column block keeps its running partial
// results on the device (the reduction's accumulators; argmin/argmax's carry indices from the
// tile's first row on): the first tile of a column block reduces into them, each later tile
// reduces beside them, and a reduction of the partials [running | tile] makes the new running
// results, ping-ponged between two pairs, or for the last tile the results in the out slot.
#include "primitives.cuh"
#include "reduce/reduce.cuh"
#include "runtime/runtime.cuh"
#include "streaming/engine.cuh"

namespace gp {
namespace {

class ReduceTiler final : public SlabTiler {
  public:
    ReduceTiler(const gp_reduce_args &args, const Layout &layout, const SlabWalk &walk, int64_t partial_bytes)
        : SlabTiler(layout, walk), args_(args), partial_bytes_(partial_bytes),
          partial_row_(static_cast<size_t>(walk.i_block() * partial_bytes))
    {
    }

    // Two [running | tile] pairs of a column block's partial results, when the slabs are cut.
    int start(int, gp_error *err) override
    {
        return slabs_cut() ? running_.allocate(4 * partial_row_, err) : 0;
    }

    int compute(int device, const Box &box, const void *device_in, void *device_out, Box *out_box,
                gp_error *err) override
    {
        const bool first = first_along_n(box), last = last_along_n(box);
        const gp_reduce_args tile = packed(args_, box);
        if (last) *out_box = {box.o0, box.o_count, 0, 1, box.i0, box.i_count};
        if (first && last) return launch_reduce(device, tile, device_in, device_out, err);
        const size_t row = static_cast<size_t>(box.i_count * partial_bytes_);
        char *pair = pair_at(current_), *next_pair = pair_at(1 - current_);
        ReduceForm to_partials;
        to_partials.partials_out = true;
        to_partials.index_base = box.k0;
        if (launch_reduce(device, tile, device_in, first ? pair : pair + row, err, to_partials)) return -1;
        if (first) return 0;
        // Combine the pair into the running results; the last tile's are the results.
        gp_reduce_args combine = args_;
        combine.outer = 1;
        combine.n = 2;
        combine.inner = box.i_count;
        ReduceForm of_partials;
        of_partials.partials_in = true;
        of_partials.partials_out = !last;
        if (launch_reduce(device, combine, pair, last ? device_out : next_pair, err, of_partials)) return -1;
        current_ = 1 - current_;
        return 0;
    }

  private:
    char *pair_at(int p) const { return running_.as<char>() + p * 2 * partial_row_; }

    gp_reduce_args args_;
    int64_t partial_bytes_;  // bytes of one partial result
    size_t partial_row_;     // bytes of one row of partial results of a column block
    DeviceBuffer running_;
    int current_ = 0;  // the pair holding the running results
};

}  // namespace

std::unique_ptr<Tiler> reduce_tiler(const gp_call &call, const gp_plan &plan, gp_error *err)
{
    const gp_reduce_args &args = call.reduce;
    const int64_t in_elem = gp_dtype_size(args.in_dtype), out_elem = gp_dtype_size(args.out_dtype);
    const int partial_bytes = reduce_partial_bytes(args, err);
    if (partial_bytes < 0) return nullptr;
    const int64_t chunk = tile_elements(plan.stream, in_elem, out_elem, in_elem, args.outer * args.n * args.inner, err);
    if (chunk == 0) return nullptr;
    const SlabWalk walk(args.outer, args.n, args.inner, chunk);
    const Tiler::Layout layout{host_view(call.in, args.outer, args.n, args.inner, in_elem, plan.input_pinned,
                                         call.in_view),
                               host_view(call.out, args.outer, 1, args.inner, out_elem, plan.result_pinned),
                               static_cast<size_t>(chunk * in_elem),
                               static_cast<size_t>(walk.o_block() * walk.i_block() * out_elem)};
    return make_tiler<ReduceTiler>(err, args, layout, walk, static_cast<int64_t>(partial_bytes));
}

}  // namespace gp
