// The streamed reduction of host arrays (the engine's Tiler for reduce, see streaming/engine.cuh).
//
// Tiles are SlabWalk's: whole outer slabs when one fits a tile, else runs of rows of one slab
// along n (column blocks of rows that are too long).  A tile of whole slabs reduces straight into
// its out slot.  Where the slabs are cut along n, each column block keeps its running result on
// the device, in the partial dtype (gp_partial_dtype; min and max: the input's): the first tile
// of a column block reduces into it, each later tile reduces beside it, and a reduction over the
// pair [running | tile] makes the new running result, ping-ponged between two pairs; the last
// tile's goes to the out slot, converted where the result dtype is not the partial one.
#include "convert/convert.cuh"
#include "primitives.cuh"
#include "reduce/reduce.cuh"
#include "runtime/runtime.cuh"
#include "streaming/engine.cuh"

namespace gp {
namespace {

class ReduceTiler final : public SlabTiler {
  public:
    ReduceTiler(const gp_reduce_args &args, const Layout &layout, const SlabWalk &walk)
        : SlabTiler(layout, walk), args_(args),
          acc_(args.op == GP_MIN || args.op == GP_MAX ? args.in_dtype : gp_partial_dtype(args.out_dtype)),
          acc_row_(static_cast<size_t>(walk.i_block() * gp_dtype_size(acc_)))
    {
    }

    // Two [running | tile] pairs of a column block's partial results, when the slabs are cut.
    int start(int, gp_error *err) override
    {
        return slabs_cut() ? running_.allocate(4 * acc_row_, err) : 0;
    }

    int compute(int device, const Box &box, const void *device_in, void *device_out, Box *out_box,
                gp_error *err) override
    {
        const bool first = first_along_n(box), last = last_along_n(box);
        gp_reduce_args tile = packed(args_, box);
        if (last) *out_box = {box.o0, box.o_count, 0, 1, box.i0, box.i_count};
        if (first && last) return launch_reduce(device, tile, device_in, device_out, err);
        const size_t row = static_cast<size_t>(box.i_count * gp_dtype_size(acc_));
        char *pair = pair_at(current_), *next_pair = pair_at(1 - current_);
        tile.out_dtype = acc_;
        if (launch_reduce(device, tile, device_in, first ? pair : pair + row, err)) return -1;
        if (first) return 0;
        // Combine the pair into the running result; the last tile's goes to the out slot.
        const bool direct = last && acc_ == args_.out_dtype;
        const gp_reduce_args combine{args_.op, acc_, acc_, 1, 2, box.i_count};
        if (launch_reduce(device, combine, pair, direct ? device_out : next_pair, err)) return -1;
        current_ = 1 - current_;
        if (!last || direct) return 0;
        const gp_convert_args convert{acc_, args_.out_dtype, box.i_count, 0};
        return launch_convert(device, convert, next_pair, device_out, err);
    }

  private:
    char *pair_at(int p) const { return running_.as<char>() + p * 2 * acc_row_; }

    gp_reduce_args args_;
    gp_dtype acc_;    // the dtype of the running results
    size_t acc_row_;  // bytes of one row of running results of a column block
    DeviceBuffer running_;
    int current_ = 0;  // the pair holding the running result
};

}  // namespace

std::unique_ptr<Tiler> reduce_tiler(const gp_call &call, const gp_plan &plan, gp_error *err)
{
    const gp_reduce_args &args = call.reduce;
    const int64_t in_elem = gp_dtype_size(args.in_dtype), out_elem = gp_dtype_size(args.out_dtype);
    const int64_t chunk = tile_elements(plan.stream, in_elem, out_elem, in_elem, args.outer * args.n * args.inner, err);
    if (chunk == 0) return nullptr;
    const SlabWalk walk(args.outer, args.n, args.inner, chunk);
    const Tiler::Layout layout{host_view(call.in, args.outer, args.n, args.inner, in_elem, plan.input_pinned),
                               host_view(call.out, args.outer, 1, args.inner, out_elem, plan.result_pinned),
                               static_cast<size_t>(chunk * in_elem),
                               static_cast<size_t>(walk.o_block() * walk.i_block() * out_elem)};
    return make_tiler<ReduceTiler>(err, args, layout, walk);
}

}  // namespace gp
