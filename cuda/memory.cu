// Device memory: stream-ordered allocations from each device's default memory pool.
//
// cudaMallocAsync/cudaFreeAsync on the work stream never synchronise the device, and the pool keeps
// freed blocks (its release threshold is raised to "never") so steady-state calls do not go back
// to the driver.  On out-of-memory the pool is trimmed and the allocation retried once.
#include <cstdint>
#include <mutex>

#include "runtime.cuh"

namespace gp {

static std::once_flag pool_once[64];

static void keep_pool_memory(int device)
{
    if (device < 0 || device >= 64) return;
    std::call_once(pool_once[device], [device] {
        cudaMemPool_t pool;
        if (cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess) {
            uint64_t threshold = UINT64_MAX;
            cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold);
        }
        cudaGetLastError();  // a pool that cannot be tuned still allocates
    });
}

int device_alloc(void **ptr, size_t bytes, gp_error *err)
{
    *ptr = nullptr;
    if (bytes == 0) return 0;
    int device = 0;
    GP_CUDA_TRY(cudaGetDevice(&device), err, "cudaGetDevice");
    keep_pool_memory(device);
    cudaError_t code = cudaMallocAsync(ptr, bytes, work_stream());
    if (code == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        cudaMemPool_t pool;
        if (cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess) {
            cudaStreamSynchronize(work_stream());
            cudaMemPoolTrimTo(pool, 0);
        }
        code = cudaMallocAsync(ptr, bytes, work_stream());
    }
    if (code != cudaSuccess) {
        *ptr = nullptr;
        return fail(err, code, "cudaMallocAsync");
    }
    return 0;
}

void device_free(void *ptr)
{
    if (ptr != nullptr) cudaFreeAsync(ptr, work_stream());
}

}  // namespace gp
