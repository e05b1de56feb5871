// Internal C++ interface of the CUDA backend's runtime layer: error translation, the table of
// per-device state and device selection (devices.cu), the stream gpuprims works on (stream.cu) and
// device memory (memory.cu).  Kernels and primitives use these and never call cudaSetDevice,
// cudaMalloc or create streams themselves.  The runtime knows nothing of the primitives or of the
// streaming engine above it.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <mutex>
#include <tuple>

#include "contract/gp_error.h"

namespace gp {

// ---- errors (devices.cu) ----------------------------------------------------------------------------

// Fills err from a CUDA error (cudaErrorMemoryAllocation becomes GP_ERR_NOMEM), clears the
// runtime's last error so that no later call reports it again, and returns -1.
int fail(gp_error *err, cudaError_t code, const char *what);
// Fills err with a non-CUDA failure and returns -1 (gp_fail).
int fail(gp_error *err, gp_status status, const char *message);

// ---- devices (devices.cu) ---------------------------------------------------------------------------

struct EngineState;  // the streaming engine's state for one device (streaming/engine.cu creates it)

// What gpuprims keeps for one device, for the life of the process: one entry per device in one
// table, created by the device's first use_device().
struct DeviceState {
    int multiprocessors = 1;              // the SM count (1 where the query failed)
    int max_dynamic_shared = 48 * 1024;   // dynamic shared memory a block may opt in to (the default where the query failed)
    int compute_major = 0;                // compute capability's major version (0 where the query failed)
    cudaStream_t work = cudaStreamLegacy;  // the work stream (stream.cu; the legacy stream where creation failed)
    cudaMemPool_t pool = nullptr;         // the caching allocator's pool (memory.cu)
    cudaError_t pool_error = cudaSuccess;  // why pool is null; reported by every allocation
    std::once_flag engine_once;           // the engine creates its state once, on the first streamed call
    EngineState *engine = nullptr;
    // blocks_per_sm()'s answers by (kernel, threads, dynamic shared bytes), under occupancy_mutex
    std::mutex occupancy_mutex;
    std::map<std::tuple<const void *, int, size_t>, int> occupancy;
    std::once_flag created;               // the fields above are set once, under this flag
};

// Makes `device` current for the calling thread, after validating the index, and creates its
// DeviceState on first use.  Every entry point calls it before anything else on the device.
int use_device(int device, gp_error *err);
// The state of a device use_device has accepted.
DeviceState &device_state(int device);
// The SM count of a device use_device has accepted.
int multiprocessor_count(int device);
// The dynamic shared memory bytes a block of a device use_device has accepted may opt in to.
int max_dynamic_shared_bytes(int device);
// The compute capability's major version of a device use_device has accepted (0 if unknown).
int compute_capability_major(int device);
// Dynamic shared memory a kernel gets without opting in (cudaFuncAttributeMaxDynamicSharedMemorySize).
constexpr size_t default_dynamic_shared_bytes = 48 * 1024;
// The blocks of `kernel` (`threads` each, `shared` bytes of dynamic shared memory) that one SM of
// `device` (current) holds at once, at least 1.  Asked of the runtime once per kernel, size and device,
// then kept (the query is host work the launches repeated on every call).  A kernel that needs more
// than the default dynamic limit is first opted in to the device's whole limit (one value for every
// caller: a smaller one set by one host thread could fail another's larger launch).
int blocks_per_sm(int device, const void *kernel, int threads, size_t shared, gp_error *err, int &blocks);

// ---- the work stream (stream.cu) ---------------------------------------------------------------------

// The stream all of gpuprims' work on the current device is ordered on.
cudaStream_t work_stream();
// Waits for work_stream() and reports any asynchronous error.
int synchronize(gp_error *err, const char *what);

// ---- device memory (memory.cu) --------------------------------------------------------------------

// Stream-ordered device memory from the device's pool, which keeps freed blocks for reuse.  Out of
// memory: the pool is trimmed and the allocation retried once before GP_ERR_NOMEM is reported.
// device_free returns a block in the work stream's order and reports a failure of that.
int device_alloc(void **ptr, size_t bytes, gp_error *err);
int device_free(void *ptr, gp_error *err);

// Owns one device allocation for the duration of a call.  Its release on destruction cannot report
// a failure: a failed free is consumed there (never left for a later call to report).
class DeviceBuffer {
  public:
    DeviceBuffer() = default;
    DeviceBuffer(const DeviceBuffer &) = delete;
    DeviceBuffer &operator=(const DeviceBuffer &) = delete;
    ~DeviceBuffer()
    {
        gp_error ignored;
        device_free(ptr_, &ignored);
    }
    int allocate(size_t bytes, gp_error *err) { return device_alloc(&ptr_, bytes, err); }
    template <class T> T *as() const { return static_cast<T *>(ptr_); }

  private:
    void *ptr_ = nullptr;
};

// ---- creating a device's state (devices.cu calls these once per device, the device current) -----

cudaStream_t create_work_stream();                             // stream.cu
cudaError_t create_memory_pool(int device, cudaMemPool_t *pool);  // memory.cu

}  // namespace gp

// Returns -1 from the enclosing function with err filled when a CUDA call fails.
#define GP_CUDA_TRY(call, err, what)                                                           \
    do {                                                                                       \
        cudaError_t gp_code_ = (call);                                                         \
        if (gp_code_ != cudaSuccess) return gp::fail((err), gp_code_, (what));                 \
    } while (0)

// Checks a kernel launch: launch-configuration errors surface here, execution errors at the sync.
#define GP_CHECK_LAUNCH(err, what) GP_CUDA_TRY(cudaGetLastError(), err, what)
