// Device memory: gpuprims' caching allocator.
//
// Each device gets its own stream-ordered memory pool (cudaMemPoolCreate), allocated from and
// freed to on the work stream.  The pool keeps freed blocks (release threshold "never"), so
// steady-state calls never reach cudaMalloc/cudaFree, and a DeviceArray's memory goes back to the
// pool when it dies.  Out of memory: the pool's unused blocks are released and the allocation
// retried once.  A pool of our own also makes memory_info() count gpuprims' memory only.
#include <cstdint>

#include "gpuprims_cuda.h"
#include "pinned/pinned.cuh"
#include "runtime/runtime.cuh"

namespace gp {

cudaError_t create_memory_pool(int device, cudaMemPool_t *pool)
{
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    *pool = nullptr;
    cudaError_t code = cudaMemPoolCreate(pool, &props);
    if (code != cudaSuccess) {
        cudaGetLastError();
        *pool = nullptr;
        return code;
    }
    uint64_t threshold = UINT64_MAX;
    code = cudaMemPoolSetAttribute(*pool, cudaMemPoolAttrReleaseThreshold, &threshold);
    if (code != cudaSuccess) {
        cudaGetLastError();
        if (cudaMemPoolDestroy(*pool) != cudaSuccess) cudaGetLastError();  // the first error is the one reported
        *pool = nullptr;
    }
    return code;
}

namespace {

// The current device's pool, or a failure saying why it has none.
int current_pool(cudaMemPool_t *pool, gp_error *err)
{
    int device = 0;
    GP_CUDA_TRY(cudaGetDevice(&device), err, "cudaGetDevice");
    const DeviceState &state = device_state(device);
    if (state.pool == nullptr) return fail(err, state.pool_error, "cudaMemPoolCreate");
    *pool = state.pool;
    return 0;
}

}  // namespace

int device_alloc(void **ptr, size_t bytes, gp_error *err)
{
    *ptr = nullptr;
    if (bytes == 0) return 0;
    cudaMemPool_t pool = nullptr;
    if (current_pool(&pool, err)) return -1;
    const cudaStream_t stream = work_stream();
    cudaError_t code = cudaMallocFromPoolAsync(ptr, bytes, pool, stream);
    if (code == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        // Let the pending frees complete, then give every unused block back and try once more.
        GP_CUDA_TRY(cudaStreamSynchronize(stream), err, "waiting for pending frees (out of device memory)");
        GP_CUDA_TRY(cudaMemPoolTrimTo(pool, 0), err, "cudaMemPoolTrimTo (out of device memory)");
        code = cudaMallocFromPoolAsync(ptr, bytes, pool, stream);
    }
    if (code != cudaSuccess) {
        *ptr = nullptr;
        return fail(err, code, "cudaMallocFromPoolAsync");
    }
    return 0;
}

int device_free(void *ptr, gp_error *err)
{
    if (ptr == nullptr) return 0;
    GP_CUDA_TRY(cudaFreeAsync(ptr, work_stream()), err, "cudaFreeAsync");
    return 0;
}

}  // namespace gp

extern "C" int gp_cuda_alloc(int device, size_t bytes, void **ptr, gp_error *err)
{
    *ptr = nullptr;
    if (gp::use_device(device, err)) return -1;
    return gp::device_alloc(ptr, bytes, err);
}

extern "C" int gp_cuda_free(int device, void *ptr, gp_error *err)
{
    if (ptr == nullptr) return 0;
    if (gp::use_device(device, err)) return -1;
    return gp::device_free(ptr, err);
}

extern "C" int gp_cuda_memcpy(int device, void *dst, const void *src, size_t bytes, int wait, gp_error *err)
{
    if (gp::use_device(device, err)) return -1;
    if (bytes == 0) return 0;
    GP_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, gp::work_stream()), err, "cudaMemcpyAsync");
    return wait ? gp::synchronize(err, "copy") : 0;
}

extern "C" int gp_cuda_pointer_device(const void *ptr, int *device, gp_error *err)
{
    cudaPointerAttributes attributes;
    GP_CUDA_TRY(cudaPointerGetAttributes(&attributes, ptr), err, "cudaPointerGetAttributes");
    if (attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged)
        return gp::fail(err, GP_ERR_INVALID, "the address is not device memory (a host pointer posing as a GPU array?)");
    *device = attributes.device;
    return 0;
}

extern "C" int gp_cuda_memory_info(int device, gp_cuda_memory *info, gp_error *err)
{
    using namespace gp;
    cudaMemPool_t pool = nullptr;
    // Frees are stream-ordered: let the ones already enqueued happen, so the numbers are settled.
    if (use_device(device, err) || current_pool(&pool, err) || synchronize(err, "memory_info")) return -1;
    uint64_t value = 0;
    GP_CUDA_TRY(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &value), err, "cudaMemPoolGetAttribute");
    info->in_use = value;
    GP_CUDA_TRY(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &value), err, "cudaMemPoolGetAttribute");
    info->reserved = value;
    GP_CUDA_TRY(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &value), err, "cudaMemPoolGetAttribute");
    info->peak_in_use = value;
    GP_CUDA_TRY(cudaMemGetInfo(&info->device_free, &info->device_total), err, "cudaMemGetInfo");
    return 0;
}

extern "C" int gp_cuda_empty_cache(int device, gp_error *err)
{
    using namespace gp;
    cudaMemPool_t pool = nullptr;
    if (use_device(device, err) || current_pool(&pool, err)) return -1;
    if (synchronize(err, "emptying the cache")) return -1;
    GP_CUDA_TRY(cudaMemPoolTrimTo(pool, 0), err, "cudaMemPoolTrimTo");
    return release_cached_pinned_blocks(err);
}
