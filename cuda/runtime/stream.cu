// The stream gpuprims orders its work on: one stream per device, created with the device's state
// and shared by every host thread.  A stream handle that means the same thing in every thread is
// what __cuda_array_interface__ and DLPack exchange, and memory freed by one thread can be reused by
// another without a race, because both order on the same stream.  It is a blocking stream: it also
// waits for (and is waited on by) work on the legacy default stream, as CuPy and PyTorch use by
// default.
#include "gpuprims_cuda.h"
#include "runtime/runtime.cuh"

namespace gp {

cudaStream_t create_work_stream()
{
    cudaStream_t stream = nullptr;
    if (cudaStreamCreate(&stream) == cudaSuccess) return stream;
    // Creation only fails when the device is unusable; the legacy stream then reports that.
    cudaGetLastError();
    return cudaStreamLegacy;
}

cudaStream_t work_stream()
{
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) {
        cudaGetLastError();  // no usable device: the legacy stream reports that at the first use
        return cudaStreamLegacy;
    }
    return device_state(device).work;
}

int synchronize(gp_error *err, const char *what)
{
    GP_CUDA_TRY(cudaStreamSynchronize(work_stream()), err, what);
    return 0;
}

namespace {

// A stream named the DLPack / __cuda_array_interface__ way: 1 legacy default, 2 per-thread default,
// anything else a cudaStream_t.
cudaStream_t foreign_stream(uintptr_t handle)
{
    if (handle == 1) return cudaStreamLegacy;
    if (handle == 2) return cudaStreamPerThread;
    return reinterpret_cast<cudaStream_t>(handle);
}

// `waiter` waits for everything enqueued on `signaller` so far.
int order_after(cudaStream_t waiter, cudaStream_t signaller, gp_error *err)
{
    if (waiter == signaller) return 0;
    cudaEvent_t event;
    GP_CUDA_TRY(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), err, "cudaEventCreate");
    cudaError_t code = cudaEventRecord(event, signaller);
    if (code == cudaSuccess) code = cudaStreamWaitEvent(waiter, event, 0);
    const cudaError_t destroyed = cudaEventDestroy(event);  // released once the wait is satisfied
    if (code != cudaSuccess) return fail(err, code, "ordering work between streams");
    GP_CUDA_TRY(destroyed, err, "cudaEventDestroy");
    return 0;
}

}  // namespace
}  // namespace gp

extern "C" uintptr_t gp_cuda_work_stream(int device)
{
    gp_error ignored;
    if (gp::use_device(device, &ignored)) return reinterpret_cast<uintptr_t>(cudaStreamLegacy);
    return reinterpret_cast<uintptr_t>(gp::device_state(device).work);
}

extern "C" int gp_cuda_wait_for_stream(int device, uintptr_t producer, gp_error *err)
{
    if (gp::use_device(device, err)) return -1;
    return gp::order_after(gp::work_stream(), gp::foreign_stream(producer), err);
}

extern "C" int gp_cuda_signal_stream(int device, uintptr_t consumer, gp_error *err)
{
    if (gp::use_device(device, err)) return -1;
    return gp::order_after(gp::foreign_stream(consumer), gp::work_stream(), err);
}

extern "C" int gp_cuda_synchronize(int device, gp_error *err)
{
    if (gp::use_device(device, err)) return -1;
    return gp::synchronize(err, "waiting for the device");
}
