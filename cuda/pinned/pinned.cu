// Page-locked (pinned) host memory: the cache of pinned blocks that streamed results are written
// into, gpuprims' pinned arrays, and whether an address range is pinned.
#include <algorithm>
#include <deque>
#include <map>
#include <mutex>
#include <vector>

#include "gpuprims_cuda.h"
#include "pinned/pinned.cuh"
#include "runtime/runtime.cuh"

namespace gp {
namespace {

struct PinnedTuning {
    // The cache keeps up to this many bytes of blocks whose arrays died, and lends at most this
    // many at once to live results: larger results, and results past it (Dask's threads streaming
    // 16 chunks of 256 MiB), get pageable memory.  Pinning a fresh 2 GiB block took 0.8 s on the
    // H200 machine, ten times the streamed call; a block freed past the cache costs as much again.
    static constexpr size_t cache_bytes = size_t(1) << 30;
    static constexpr size_t block_granularity = size_t(2) << 20;  // block sizes are multiples of this
};

// Frees pinned blocks; reports the first failure, after trying every block.
int free_blocks(const std::vector<void *> &blocks, gp_error *err)
{
    cudaError_t first = cudaSuccess;
    for (void *block : blocks) {
        const cudaError_t code = cudaFreeHost(block);
        if (code != cudaSuccess && first == cudaSuccess) first = code;
    }
    return first == cudaSuccess ? 0 : fail(err, first, "cudaFreeHost");
}

// Pinned blocks for streamed results.  The copy engine writes a result straight into one, and the
// block returns here when the result array dies, so steady-state calls neither pin memory (~0.4 s
// per GiB) nor fault in fresh pages (writing a fresh 256 MiB NumPy array costs ~60 ms of page
// faults on the H200 machine, more than the whole streamed call).
class PinnedCache {
  public:
    static PinnedCache &instance()
    {
        static PinnedCache *cache = new PinnedCache();
        return *cache;
    }

    // A cached block of at least `bytes` (and at most twice that), else a new one.
    int take(size_t bytes, void **ptr, size_t *capacity, gp_error *err)
    {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            auto block = free_.lower_bound(bytes);
            if (block != free_.end() && block->first <= 2 * bytes) {
                *capacity = block->first;
                *ptr = block->second;
                cached_ -= block->first;
                lent_ += block->first;
                free_.erase(block);
                order_.erase(std::find(order_.begin(), order_.end(), *ptr));
                return 0;
            }
        }
        const size_t granularity = PinnedTuning::block_granularity;
        *capacity = (std::max<size_t>(bytes, 1) + granularity - 1) / granularity * granularity;
        GP_CUDA_TRY(cudaHostAlloc(ptr, *capacity, cudaHostAllocPortable), err, "cudaHostAlloc");
        std::lock_guard<std::mutex> lock(mutex_);
        lent_ += *capacity;
        return 0;
    }

    // Whether a result of `bytes` gets a block: a cached one, or a new one that keeps the blocks
    // lent to live results within the cache's size.
    bool serves(size_t bytes)
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto block = free_.lower_bound(bytes);
        if (block != free_.end() && block->first <= 2 * bytes) return true;
        return lent_ + bytes <= PinnedTuning::cache_bytes;
    }

    // Keeps the block for reuse; frees the oldest blocks past the cache's size.
    int give(void *ptr, size_t capacity, gp_error *err)
    {
        std::vector<void *> evicted;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            lent_ -= capacity;
            free_.emplace(capacity, ptr);
            order_.push_back(ptr);
            cached_ += capacity;
            while (cached_ > PinnedTuning::cache_bytes && !order_.empty()) {
                void *oldest = order_.front();
                order_.pop_front();
                auto block = std::find_if(free_.begin(), free_.end(), [&](const auto &entry) { return entry.second == oldest; });
                cached_ -= block->first;
                evicted.push_back(oldest);
                free_.erase(block);
            }
        }
        return free_blocks(evicted, err);
    }

    // Frees every cached block.
    int trim(gp_error *err)
    {
        std::vector<void *> blocks;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            for (const auto &entry : free_) blocks.push_back(entry.second);
            free_.clear();
            order_.clear();
            cached_ = 0;
        }
        return free_blocks(blocks, err);
    }

  private:
    std::mutex mutex_;
    std::multimap<size_t, void *> free_;  // capacity -> block
    std::deque<void *> order_;            // the cached blocks, oldest first
    size_t cached_ = 0;
    size_t lent_ = 0;  // the bytes of blocks held by live results
};

// Whether [ptr, ptr + bytes) is page-locked host memory (gpuprims', CuPy's, PyTorch's or
// registered), which the DMA engines read and write directly.
bool host_pinned(const void *ptr, size_t bytes)
{
    const char *ends[2] = {static_cast<const char *>(ptr), static_cast<const char *>(ptr) + bytes - 1};
    for (const char *address : ends) {
        cudaPointerAttributes attributes;
        if (cudaPointerGetAttributes(&attributes, address) != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        if (attributes.type != cudaMemoryTypeHost) return false;
    }
    return true;
}

}  // namespace

int release_cached_pinned_blocks(gp_error *err) { return PinnedCache::instance().trim(err); }

}  // namespace gp

extern "C" int gp_cuda_host_alloc(size_t bytes, int cached, void **ptr, size_t *capacity, gp_error *err)
{
    *ptr = nullptr;
    *capacity = bytes ? bytes : 1;
    if (gp_cuda_device_count(err) == 0) return -1;
    if (cached) return gp::PinnedCache::instance().take(bytes, ptr, capacity, err);
    GP_CUDA_TRY(cudaHostAlloc(ptr, *capacity, cudaHostAllocPortable), err, "cudaHostAlloc");
    return 0;
}

extern "C" int gp_cuda_host_free(void *ptr, size_t capacity, int cached, gp_error *err)
{
    if (ptr == nullptr) return 0;
    if (cached) return gp::PinnedCache::instance().give(ptr, capacity, err);
    GP_CUDA_TRY(cudaFreeHost(ptr), err, "cudaFreeHost");
    return 0;
}

extern "C" int gp_cuda_host_is_pinned(const void *ptr, size_t bytes)
{
    gp_error ignored;
    if (ptr == nullptr || bytes == 0 || gp_cuda_device_count(&ignored) == 0) return 0;
    return gp::host_pinned(ptr, bytes);
}

extern "C" int gp_cuda_pinned_result_fits(size_t bytes)
{
    return bytes <= gp::PinnedTuning::cache_bytes && gp::PinnedCache::instance().serves(bytes);
}
