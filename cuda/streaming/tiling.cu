// The tiling helpers the primitives' tilers share (see engine.cuh): the tile limits under the
// plan's stream settings and the tile walk of reduce and scan.  Host arithmetic only: nothing here
// touches a device, so gp_cuda_stream_tiles can walk tiles in a process without one.
#include <algorithm>

#include "streaming/engine.cuh"

namespace gp {

HostView host_view(const void *data, int64_t outer, int64_t n, int64_t inner, int64_t elem, bool pinned,
                   const gp_copy_args *gather)
{
    return {static_cast<char *>(const_cast<void *>(data)), outer, n, inner, elem, pinned && gather == nullptr, gather};
}

int64_t boxes_count(const Boxes &boxes)
{
    int64_t count = 0;
    for (const Box &box : boxes) count += box.count();
    return count;
}

namespace {

// The chunk setting in elements of `elem` bytes (at least one), and at most a min_tiles-th of the
// call's `count` elements.
int64_t chunk_elements(const gp_stream_settings &settings, int64_t count, size_t elem)
{
    const size_t chunk_bytes = settings.chunk_bytes ? settings.chunk_bytes : StreamTuning::chunk_bytes;
    const int64_t setting = static_cast<int64_t>(std::min<size_t>(chunk_bytes / elem, INT64_MAX / 2));
    const int64_t share = (count + StreamTuning::min_tiles - 1) / StreamTuning::min_tiles;
    return std::max<int64_t>(1, std::min(setting, share));
}

}  // namespace

TileLimits tile_limits(const gp_stream_settings &settings, int64_t elem, int64_t count)
{
    return {chunk_elements(settings, count, static_cast<size_t>(elem)),
            static_cast<int64_t>(std::min<size_t>(settings.max_device_bytes, INT64_MAX) / StreamTuning::slots /
                                 static_cast<size_t>(elem))};
}

int64_t tile_elements(const gp_stream_settings &settings, int64_t in_elem, int64_t out_elem, int64_t widest,
                      int64_t count, gp_error *err)
{
    const size_t per_element = static_cast<size_t>(StreamTuning::slots * (in_elem + out_elem) +
                                                   StreamTuning::workspace_bytes_per_element);
    const size_t fitting = settings.max_device_bytes / per_element;
    if (fitting == 0) {
        too_small_for_a_tile(err);
        return 0;
    }
    return std::min(chunk_elements(settings, count, static_cast<size_t>(widest)),
                    static_cast<int64_t>(std::min<size_t>(fitting, INT64_MAX / 2)));
}

int too_small_for_a_tile(gp_error *err)
{
    return gp_fail(err, GP_ERR_NOMEM, "GPUPRIMS_MAX_DEVICE_BYTES is too small to stream this array");
}

SlabWalk::SlabWalk(int64_t outer, int64_t n, int64_t inner, int64_t chunk) : outer_(outer), n_(n), inner_(inner)
{
    if (n * inner <= chunk) {
        o_block_ = std::min(outer, chunk / (n * inner));
        k_block_ = n;
        i_block_ = inner;
        return;
    }
    i_block_ = std::min(inner, std::max<int64_t>(1, chunk / StreamTuning::min_rows_per_column_tile));
    o_block_ = 1;
    k_block_ = std::min(n, chunk / i_block_);
}

bool SlabWalk::next(Box *box)
{
    if (o_ >= outer_) return false;
    *box = {o_, std::min(o_block_, outer_ - o_), k_, std::min(k_block_, n_ - k_), i_, std::min(i_block_, inner_ - i_)};
    if ((k_ += k_block_) >= n_) {
        k_ = 0;
        if ((i_ += i_block_) >= inner_) {
            i_ = 0;
            o_ += o_block_;
        }
    }
    return true;
}

}  // namespace gp
