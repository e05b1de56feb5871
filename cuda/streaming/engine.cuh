// The streaming engine's interface: the Tiler a primitive gives the engine to stream one call of
// host arrays, the engine's entry point (engine.cu), and the tiling vocabulary the primitives'
// tilers share (tiling.cu).  The engine knows no primitive: a tiler cuts its call into tiles and
// computes one tile on the device, the engine moves the tiles in and out.  Nothing here touches the
// device except stream() and a tiler's start() and compute().
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "contract/gp_call.h"
#include "contract/gp_error.h"
#include "contract/gp_plan.h"

namespace gp {

// Tuning constants of the streaming engine and of the tiles it is given.
struct StreamTuning {
    static constexpr int slots = 4;                          // tiles in flight
    static constexpr size_t chunk_bytes = size_t(8) << 20;  // input bytes per tile (plan.stream.chunk_bytes 0)
    // A streamed array is cut into at least this many tiles, so that copies in, compute and copies
    // out overlap also for arrays of one or two chunks (H200, convolve of 8 MiB: 0.85 ms in one
    // tile, 0.54 ms in smaller ones).
    static constexpr int64_t min_tiles = 4;
    static constexpr int max_copy_threads = 8;  // one host thread copies pageable memory at ~10 GB/s
    // A gather (a strided input view) moves fewer bytes a thread than memcpy, so it takes more
    // threads, but not every core: the calling thread and the driver's must keep one.  H100 host,
    // 16 cores, a[::2] of 2^26 float32 streamed: pool of 16 threads 12.9 ms, 12 threads 7.7 ms, 8
    // threads 10.6 ms; the contiguous array 5.4-5.7 ms.
    static constexpr int gather_thread_percent = 75;  // of the pool's threads
    static constexpr size_t bytes_per_copy_part = size_t(512) << 10;  // smaller copies use fewer threads
    static constexpr int64_t copy_part_alignment = 64;  // copy threads split a copy at cache lines
    // A tile that cuts columns covers at least this many rows, so the running results of its
    // columns (4 accumulators each) take at most chunk elements' bytes.
    static constexpr int64_t min_rows_per_column_tile = 32;
    // Device bytes per element of a tile beyond the slots: carries and kernel workspace.
    static constexpr int64_t workspace_bytes_per_element = 2;
    static constexpr int64_t slot_alignment = 256;  // device slots start where vectorized loads may
};

// ---- host arrays and tiles ----------------------------------------------------------------------

// A host array seen as (outer, n, inner) elements of elem bytes: C-contiguous, or a strided view
// (`gather`, the call's in_view) whose C order is that one, gathered element by element into the
// staging slots.  Pinned (page-locked) contiguous arrays skip their staging copy: the DMA reads or
// writes them directly.
struct HostView {
    char *data;
    int64_t outer, n, inner, elem;
    bool pinned;
    const gp_copy_args *gather;
};

HostView host_view(const void *data, int64_t outer, int64_t n, int64_t inner, int64_t elem, bool pinned,
                   const gp_copy_args *gather = nullptr);

// The elements [o0, o0 + o_count) x [k0, k0 + k_count) x [i0, i0 + i_count) of a HostView; on the
// device a tile is packed, (o_count, k_count, i_count).
struct Box {
    int64_t o0, o_count, k0, k_count, i0, i_count;
    int64_t count() const { return o_count * k_count * i_count; }
    size_t offset(const HostView &view) const
    {
        return static_cast<size_t>(((o0 * view.n + k0) * view.inner + i0) * view.elem);
    }
    // Whether the box is one contiguous range of the view.
    bool contiguous(const HostView &view) const
    {
        return i_count == view.inner && (k_count == view.n || o_count == 1);
    }
    // The box as runs of contiguous bytes of the view, one after another in the packed form: the
    // whole box, a run per slab (whole rows), or a run per row.
    int64_t run_bytes(const HostView &view) const
    {
        if (contiguous(view)) return count() * view.elem;
        return (i_count == view.inner ? k_count * i_count : i_count) * view.elem;
    }
    size_t run_offset(const HostView &view, int64_t run) const
    {
        if (contiguous(view)) return offset(view);
        if (i_count == view.inner) return Box{o0 + run, 1, k0, 1, i0, 1}.offset(view);
        return Box{o0 + run / k_count, 1, k0 + run % k_count, 1, i0, 1}.offset(view);
    }
};

// The boxes of a view that make up one tile's input, packed one after another in the slot (one
// box for reduce and scan; a convolution tile at a wrapped or mirrored edge gathers several).
using Boxes = std::vector<Box>;

int64_t boxes_count(const Boxes &boxes);

// A tile of a streamed call: the box its computation is told about (reduce and scan: the input
// box; correlate and copy: the output box) and the boxes of the input it is packed from.
struct Tile {
    Box box;
    Boxes input;
};

// ---- the tiler interface --------------------------------------------------------------------------

// A primitive's streamed form of one call: what the engine moves (the host arrays and the device
// bytes of one tile's input and result), the tiles in order, and the computation of a tile.  Built
// by the primitive's factory from the call and its plan (primitives.cuh) without touching the
// device; the tiles can be walked without a device too (gp_cuda_stream_tiles).
class Tiler {
  public:
    struct Layout {
        HostView in, out;          // the call's host arrays
        size_t in_slot, out_slot;  // device bytes of one tile's input, and of its result
    };

    explicit Tiler(const Layout &layout) : layout_(layout) {}
    virtual ~Tiler() = default;
    Tiler(const Tiler &) = delete;
    Tiler &operator=(const Tiler &) = delete;

    const Layout &layout() const { return layout_; }
    // Fills in the next tile; false after the last.
    virtual bool next(Tile *tile) = 0;
    // Sets up what the tiles share on the device (running results, carries), on the work stream of
    // `device` (current), before the first compute().
    virtual int start(int /*device*/, gp_error * /*err*/) { return 0; }
    // Enqueues the computation of the tile whose box next() gave, from its packed input in
    // device_in to device_out, on the work stream, and sets *out_box to the box of the result it
    // wrote to device_out (count 0: none yet, as for a reduction tile that is not the last of its
    // columns).  Called once per tile, in order.
    virtual int compute(int device, const Box &box, const void *device_in, void *device_out, Box *out_box,
                        gp_error *err) = 0;
    // Reports what the tiles found (a scan's non-finite flag) once every result has reached the host.
    virtual int finish(int /*device*/, gp_error * /*err*/) { return 0; }

  private:
    Layout layout_;
};

// A new tiler of type T, or null with err set when out of host memory.
template <class T, class... Args> std::unique_ptr<Tiler> make_tiler(gp_error *err, Args &&...args)
{
    std::unique_ptr<Tiler> tiler(new (std::nothrow) T(std::forward<Args>(args)...));
    if (!tiler) gp_fail(err, GP_ERR_NOMEM, "out of host memory for a streamed call");
    return tiler;
}

// ---- the engine (engine.cu) -----------------------------------------------------------------------

// Streams the tiles of `tiler` through the device's ring of slots: each tile is staged, copied in,
// computed on the work stream and copied out into the host result, while the next tiles are staged
// and copied.  `device` is current (use_device).  One streamed call runs per device at a time (the
// bus is the bottleneck; a second caller waits), and the call returns with its copies and kernels
// done, also after a failure.  settings.fail_tile >= 0 makes the call fail at that tile (a test hook).
int stream(int device, Tiler &tiler, const gp_stream_settings &settings, gp_error *err);

// ---- tiling helpers the tilers share (tiling.cu) --------------------------------------------------

// The tile limits of a correlate or copy call of `count` elements (input elements of a
// correlation, output ones of a copy) of `elem` bytes: the elements of one tile (the chunk setting,
// and at most a min_tiles-th of the call), and what one tile's input and result together may hold
// so that the slots fit the device cap (plan.stream.max_device_bytes).
struct TileLimits {
    int64_t chunk, slot;
};
TileLimits tile_limits(const gp_stream_settings &settings, int64_t elem, int64_t count);

// The elements of a tile of a reduce or scan of `count` elements: the chunk setting in elements of
// `widest` bytes (at most a min_tiles-th of the call), lowered so that the slots (elements of
// in_elem and out_elem bytes), carries and workspace fit the device cap.  0 (with err set) when not
// even one element fits.
int64_t tile_elements(const gp_stream_settings &settings, int64_t in_elem, int64_t out_elem, int64_t widest,
                      int64_t count, gp_error *err);

// The failure of a call whose device cap leaves no room for one tile (MemoryError).
int too_small_for_a_tile(gp_error *err);

// The tiles of reduce and scan over an (outer, n, inner) view, of `chunk` elements: whole outer
// slabs when one fits, else runs of rows of one slab (a block of at least min_rows_per_column_tile
// rows of a column block when a row is too long), walked slab by slab, column block by column
// block, along n.
class SlabWalk {
  public:
    SlabWalk(int64_t outer, int64_t n, int64_t inner, int64_t chunk);
    int64_t n() const { return n_; }
    int64_t o_block() const { return o_block_; }
    int64_t k_block() const { return k_block_; }  // < n: the slabs are cut along n
    int64_t i_block() const { return i_block_; }
    // Fills in the next box; false after the last.
    bool next(Box *box);

  private:
    int64_t outer_, n_, inner_;
    int64_t o_block_, k_block_, i_block_;
    int64_t o_ = 0, k_ = 0, i_ = 0;
};

// The tiles of reduce and scan: SlabWalk's boxes of the input, each tile's input its own box.
class SlabTiler : public Tiler {
  public:
    SlabTiler(const Layout &layout, const SlabWalk &walk) : Tiler(layout), walk_(walk) {}
    bool next(Tile *tile) final
    {
        if (!walk_.next(&tile->box)) return false;
        tile->input.assign(1, tile->box);
        return true;
    }

  protected:
    // Whether the slabs are cut along n, so that results carry from a tile to the next of its
    // column block.
    bool slabs_cut() const { return walk_.k_block() < walk_.n(); }
    // Whether a tile begins, or ends, its column block's run along n.
    static bool first_along_n(const Box &box) { return box.k0 == 0; }
    bool last_along_n(const Box &box) const { return box.k0 + box.k_count == walk_.n(); }
    // The call's (outer, n, inner) arguments for a tile, which is packed on the device.
    template <class Args> static Args packed(Args args, const Box &box)
    {
        args.outer = box.o_count;
        args.n = box.k_count;
        args.inner = box.i_count;
        return args;
    }

    const SlabWalk &walk() const { return walk_; }

  private:
    SlabWalk walk_;
};

}  // namespace gp
