// Internal C++ interface of the CUDA backend's runtime layer: error translation and device selection
// (device.cu), the stream gpuprims works on (stream.cu) and device memory (memory.cu).  Kernels and
// primitives use these and never call cudaSetDevice, cudaMalloc or create streams themselves.
#pragma once

#include <cuda_runtime.h>
#include <cstddef>
#include "gp_types.h"

namespace gp {

// Fills err from a CUDA error (cudaErrorMemoryAllocation becomes GP_ERR_NOMEM) and returns -1.
int fail(gp_error *err, cudaError_t code, const char *what);
// Fills err with a non-CUDA failure and returns -1.
int fail(gp_error *err, gp_status status, const char *message);

// Makes `device` current for the calling thread; validates the index.
int use_device(int device, gp_error *err);
// Multiprocessor count of `device` (cached after the first query).
int multiprocessor_count(int device);

// The stream all of gpuprims' work on the current device is ordered on.
cudaStream_t work_stream();
// Waits for work_stream() and reports any asynchronous error.
int synchronize(gp_error *err, const char *what);

// Stream-ordered device memory from a pool that keeps freed blocks for reuse.  Out of memory: the
// pool is trimmed and the allocation retried once before GP_ERR_NOMEM is reported.
int device_alloc(void **ptr, size_t bytes, gp_error *err);
void device_free(void *ptr);

// Owns one device allocation for the duration of a call.
class DeviceBuffer {
  public:
    DeviceBuffer() = default;
    DeviceBuffer(const DeviceBuffer &) = delete;
    DeviceBuffer &operator=(const DeviceBuffer &) = delete;
    ~DeviceBuffer() { device_free(ptr_); }
    int allocate(size_t bytes, gp_error *err) { return device_alloc(&ptr_, bytes, err); }
    template <class T> T *as() const { return static_cast<T *>(ptr_); }

  private:
    void *ptr_ = nullptr;
};

}  // namespace gp

// Returns -1 from the enclosing function with err filled when a CUDA call fails.
#define GP_CUDA_TRY(call, err, what)                                                           \
    do {                                                                                       \
        cudaError_t gp_code_ = (call);                                                         \
        if (gp_code_ != cudaSuccess) return gp::fail((err), gp_code_, (what));                 \
    } while (0)

// Checks a kernel launch: launch-configuration errors surface here, execution errors at the sync.
#define GP_CHECK_LAUNCH(err, what) GP_CUDA_TRY(cudaGetLastError(), err, what)

namespace gp {

// Runs `run(device_in, device_out)` on device copies of a host input and output: allocate, copy
// in, run, copy out, wait.  Buffers are released on every path.
template <class F>
int with_device_copies(const void *host_in, size_t in_bytes, void *host_out, size_t out_bytes,
                       gp_error *err, F &&run)
{
    DeviceBuffer device_in, device_out;
    if (device_in.allocate(in_bytes, err) || device_out.allocate(out_bytes, err)) return -1;
    GP_CUDA_TRY(cudaMemcpyAsync(device_in.as<void>(), host_in, in_bytes, cudaMemcpyHostToDevice,
                                work_stream()),
                err, "copy to device");
    if (run(device_in.as<const void>(), device_out.as<void>())) return -1;
    GP_CUDA_TRY(cudaMemcpyAsync(host_out, device_out.as<void>(), out_bytes, cudaMemcpyDeviceToHost,
                                work_stream()),
                err, "copy to host");
    return synchronize(err, "waiting for the device");
}

}  // namespace gp
