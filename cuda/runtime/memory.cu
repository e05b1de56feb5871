// Device memory: gpuprims' caching allocator.
//
// Each device gets its own stream-ordered memory pool (cudaMemPoolCreate), allocated from and
// freed to on the work stream.  The pool keeps freed blocks (release threshold "never"), so
// steady-state calls never reach cudaMalloc/cudaFree, and a DeviceArray's memory goes back to the
// pool when it dies.  Out of memory: the pool's unused blocks are released and the allocation
// retried once.  A pool of our own also makes memory_info() count gpuprims' memory only.
#include <cstdint>
#include <mutex>

#include "gpuprims_cuda.h"
#include "pipeline.cuh"
#include "runtime.cuh"

namespace gp {

constexpr int max_pool_devices = 64;
static std::once_flag pool_once[max_pool_devices];
static cudaMemPool_t pools[max_pool_devices];
static cudaError_t pool_errors[max_pool_devices];

static int device_pool(int device, cudaMemPool_t *pool, gp_error *err)
{
    if (device < 0 || device >= max_pool_devices) return fail(err, GP_ERR_INVALID, "device index out of range");
    std::call_once(pool_once[device], [device] {
        cudaMemPoolProps props = {};
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = device;
        cudaError_t code = cudaMemPoolCreate(&pools[device], &props);
        if (code == cudaSuccess) {
            uint64_t threshold = UINT64_MAX;
            code = cudaMemPoolSetAttribute(pools[device], cudaMemPoolAttrReleaseThreshold, &threshold);
        }
        pool_errors[device] = code;
    });
    if (pool_errors[device] != cudaSuccess) return fail(err, pool_errors[device], "cudaMemPoolCreate");
    *pool = pools[device];
    return 0;
}

static int current_pool(cudaMemPool_t *pool, gp_error *err)
{
    int device = 0;
    GP_CUDA_TRY(cudaGetDevice(&device), err, "cudaGetDevice");
    return device_pool(device, pool, err);
}

int device_alloc(void **ptr, size_t bytes, gp_error *err)
{
    *ptr = nullptr;
    if (bytes == 0) return 0;
    cudaMemPool_t pool = nullptr;
    if (current_pool(&pool, err)) return -1;
    cudaError_t code = cudaMallocFromPoolAsync(ptr, bytes, pool, work_stream());
    if (code == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        cudaStreamSynchronize(work_stream());  // pending frees complete, then give them back
        cudaMemPoolTrimTo(pool, 0);
        code = cudaMallocFromPoolAsync(ptr, bytes, pool, work_stream());
    }
    if (code != cudaSuccess) {
        *ptr = nullptr;
        return fail(err, code, "cudaMallocFromPoolAsync");
    }
    return 0;
}

void device_free(void *ptr)
{
    if (ptr != nullptr) cudaFreeAsync(ptr, work_stream());
}

}  // namespace gp

extern "C" int gp_cuda_alloc(int device, size_t bytes, void **ptr, gp_error *err)
{
    if (gp::use_device(device, err)) return -1;
    return gp::device_alloc(ptr, bytes, err);
}

extern "C" void gp_cuda_free(int device, void *ptr)
{
    gp_error ignored;
    if (ptr == nullptr || gp::use_device(device, &ignored)) return;
    gp::device_free(ptr);
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
    if (use_device(device, err) || device_pool(device, &pool, err) || synchronize(err, "memory_info")) return -1;
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
    if (use_device(device, err) || device_pool(device, &pool, err)) return -1;
    if (synchronize(err, "emptying the cache")) return -1;
    GP_CUDA_TRY(cudaMemPoolTrimTo(pool, 0), err, "cudaMemPoolTrimTo");
    release_pinned_results();
    return 0;
}
