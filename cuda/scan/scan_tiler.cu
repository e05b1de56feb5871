// The streamed scan of host arrays (the engine's Tiler for scan, see streaming/engine.cuh).
//
// Tiles are SlabWalk's: whole outer slabs when one fits a tile, else runs of rows of one slab
// along n (column blocks of rows that are too long), each scanned into its out slot.  Where the
// slabs are cut along n, each column's running value (sum, product, min or max) is carried from one
// tile to the next on the device (launch_scan's carries, in the scan's accumulator), ping-ponged
// between two rows of carries.  A call's initial values are uploaded once; a box's first tile
// along n starts from them (its rows' values are contiguous: a box is whole slabs, or a run of
// columns of one slab).
#include <algorithm>

#include "primitives.cuh"
#include "runtime/runtime.cuh"
#include "scan/scan.cuh"
#include "streaming/engine.cuh"

namespace gp {
namespace {

class ScanTiler final : public SlabTiler {
  public:
    ScanTiler(const gp_scan_args &args, const Layout &layout, const SlabWalk &walk, int64_t carry_size)
        : SlabTiler(layout, walk), args_(args), carry_size_(carry_size),
          carry_row_(static_cast<size_t>(walk.i_block() * carry_size))
    {
    }

    // Two rows of carries for a column block, when the slabs are cut; the initial values; the flag.
    int start(int, gp_error *err) override
    {
        if (args_.initial != nullptr && upload_initial(args_, &initial_, err)) return -1;
        if (flag_.start(args_, err)) return -1;
        return slabs_cut() ? carries_.allocate(2 * carry_row_, err) : 0;
    }

    int compute(int device, const Box &box, const void *device_in, void *device_out, Box *out_box,
                gp_error *err) override
    {
        *out_box = box;
        const void *carry_in = first_along_n(box) ? initial(box) : carry(current_);
        if (launch_scan(device, packed(args_, box), device_in, device_out, carry_in,
                        last_along_n(box) ? nullptr : carry(1 - current_), flag_.word(), err))
            return -1;
        current_ = 1 - current_;
        return 0;
    }

    int finish(int, gp_error *err) override { return flag_.report(args_, err); }

  private:
    char *carry(int c) const { return carries_.as<char>() + c * carry_row_; }
    // The initial values of the box's rows (null without them).
    const char *initial(const Box &box) const
    {
        if (args_.initial == nullptr) return nullptr;
        return initial_.as<const char>() + (box.o0 * args_.inner + box.i0) * carry_size_;
    }

    gp_scan_args args_;
    int64_t carry_size_;  // bytes of one carry
    size_t carry_row_;  // bytes of one row of carries of a column block
    DeviceBuffer carries_;
    DeviceBuffer initial_;  // the call's initial values, one carry per row
    NonFiniteFlag flag_;    // whether a tile wrote an inf or NaN
    int current_ = 0;  // the row of carries the next tile starts from
};

}  // namespace

std::unique_ptr<Tiler> scan_tiler(const gp_call &call, const gp_plan &plan, gp_error *err)
{
    const gp_scan_args &args = call.scan;
    const int64_t carry_size = scan_carry_size(args, err);
    if (carry_size == 0) return nullptr;
    const int64_t in_elem = gp_dtype_size(args.in_dtype), out_elem = gp_dtype_size(args.out_dtype);
    const int64_t chunk = tile_elements(plan.stream, in_elem, out_elem, std::max(in_elem, out_elem),
                                        args.outer * args.n * args.inner, err);
    if (chunk == 0) return nullptr;
    const Tiler::Layout layout{host_view(call.in, args.outer, args.n, args.inner, in_elem, plan.input_pinned,
                                         call.in_view),
                               host_view(call.out, args.outer, args.n, args.inner, out_elem, plan.result_pinned),
                               static_cast<size_t>(chunk * in_elem), static_cast<size_t>(chunk * out_elem)};
    return make_tiler<ScanTiler>(err, args, layout, SlabWalk(args.outer, args.n, args.inner, chunk), carry_size);
}

}  // namespace gp
