// The stream gpuprims orders its work on: one stream per device, created on first use and shared
// by every host thread.  A stream handle that means the same thing in every thread is what
// __cuda_array_interface__ and DLPack exchange, and memory freed by one thread can be reused by
// another without a race, because both orders on the same stream.  It is a blocking stream: it
// also waits for (and is waited on by) work on the legacy default stream, as CuPy and PyTorch use
// by default.
#include <mutex>

#include "gpuprims_cuda.h"
#include "runtime.cuh"

namespace gp {

constexpr int max_stream_devices = 64;
static std::once_flag stream_once[max_stream_devices];
static cudaStream_t streams[max_stream_devices];

static cudaStream_t device_stream(int device)
{
    if (device < 0 || device >= max_stream_devices) return cudaStreamLegacy;
    std::call_once(stream_once[device], [device] {
        // Creation only fails when the device is unusable; the legacy stream then reports that.
        if (cudaStreamCreate(&streams[device]) != cudaSuccess) {
            cudaGetLastError();
            streams[device] = cudaStreamLegacy;
        }
    });
    return streams[device];
}

cudaStream_t work_stream()
{
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) cudaGetLastError();
    return device_stream(device);
}

int synchronize(gp_error *err, const char *what)
{
    GP_CUDA_TRY(cudaStreamSynchronize(work_stream()), err, what);
    return 0;
}

// A stream named the DLPack / __cuda_array_interface__ way: 1 legacy default, 2 per-thread default,
// anything else a cudaStream_t.
static cudaStream_t foreign_stream(uintptr_t handle)
{
    if (handle == 1) return cudaStreamLegacy;
    if (handle == 2) return cudaStreamPerThread;
    return reinterpret_cast<cudaStream_t>(handle);
}

// `waiter` waits for everything enqueued on `signaller` so far.
static int order_after(cudaStream_t waiter, cudaStream_t signaller, gp_error *err)
{
    if (waiter == signaller) return 0;
    cudaEvent_t event;
    GP_CUDA_TRY(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), err, "cudaEventCreate");
    cudaError_t code = cudaEventRecord(event, signaller);
    if (code == cudaSuccess) code = cudaStreamWaitEvent(waiter, event, 0);
    cudaEventDestroy(event);  // released once the wait is satisfied
    if (code != cudaSuccess) return fail(err, code, "ordering work between streams");
    return 0;
}

}  // namespace gp

extern "C" uintptr_t gp_cuda_work_stream(int device)
{
    return reinterpret_cast<uintptr_t>(gp::device_stream(device));
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
