// Kernel timing for the benchmark: the input is uploaded once, then each repeat of the resident
// entry point (all its launches and workspace allocations) is bracketed by CUDA events.
#include "copy_layout.h"
#include "gpuprims_cuda.h"
#include "runtime.cuh"

namespace gp {

// Owns a pair of events.
class EventPair {
  public:
    EventPair() = default;
    EventPair(const EventPair &) = delete;
    EventPair &operator=(const EventPair &) = delete;
    ~EventPair()
    {
        if (start) cudaEventDestroy(start);
        if (stop) cudaEventDestroy(stop);
    }
    int create(gp_error *err)
    {
        GP_CUDA_TRY(cudaEventCreate(&start), err, "cudaEventCreate");
        GP_CUDA_TRY(cudaEventCreate(&stop), err, "cudaEventCreate");
        return 0;
    }
    cudaEvent_t start = nullptr, stop = nullptr;
};

// Times `repeats` calls of run() (after one untimed warm-up) and writes milliseconds to ms.
template <class F> static int time_repeats(int repeats, float *ms, gp_error *err, F &&run)
{
    EventPair events;
    if (events.create(err) || run()) return -1;
    for (int r = 0; r < repeats; ++r) {
        GP_CUDA_TRY(cudaEventRecord(events.start, work_stream()), err, "cudaEventRecord");
        if (run()) return -1;
        GP_CUDA_TRY(cudaEventRecord(events.stop, work_stream()), err, "cudaEventRecord");
        GP_CUDA_TRY(cudaEventSynchronize(events.stop), err, "cudaEventSynchronize");
        GP_CUDA_TRY(cudaEventElapsedTime(&ms[r], events.start, events.stop), err, "cudaEventElapsedTime");
    }
    return 0;
}

// Uploads desc's host input and allocates its output, then times the resident entry point.  The
// input is the in_bytes from `in_offset` bytes before desc->in.
template <class Desc, class F>
static int time_resident(int device, const Desc *desc, size_t in_bytes, size_t out_bytes,
                         int repeats, float *ms, gp_error *err, F &&resident, size_t in_offset = 0)
{
    if (use_device(device, err)) return -1;
    DeviceBuffer device_in, device_out;
    if (device_in.allocate(in_bytes, err) || device_out.allocate(out_bytes, err)) return -1;
    GP_CUDA_TRY(cudaMemcpyAsync(device_in.as<void>(), static_cast<const char *>(desc->in) - in_offset,
                                in_bytes, cudaMemcpyHostToDevice, work_stream()),
                err, "copy to device");
    Desc on_device = *desc;
    on_device.in = device_in.as<const char>() + in_offset;
    on_device.out = device_out.as<void>();
    if (time_repeats(repeats, ms, err, [&] { return resident(device, &on_device, err); })) return -1;
    return synchronize(err, "timing");
}

}  // namespace gp

extern "C" int gp_cuda_time_reduce(int device, const gp_reduce_desc *desc, int repeats, float *ms,
                                   gp_error *err)
{
    const size_t in_bytes = static_cast<size_t>(gp_dtype_size(desc->in_dtype)) * desc->outer * desc->n * desc->inner;
    const size_t out_bytes = static_cast<size_t>(gp_dtype_size(desc->out_dtype)) * desc->outer * desc->inner;
    return gp::time_resident(device, desc, in_bytes, out_bytes, repeats, ms, err, gp_cuda_reduce_resident);
}

extern "C" int gp_cuda_time_scan(int device, const gp_scan_desc *desc, int repeats, float *ms,
                                 gp_error *err)
{
    const size_t count = static_cast<size_t>(desc->outer) * desc->n * desc->inner;
    return gp::time_resident(device, desc, count * gp_dtype_size(desc->in_dtype),
                             count * gp_dtype_size(desc->out_dtype), repeats, ms, err,
                             gp_cuda_scan_resident);
}

extern "C" int gp_cuda_time_copy_strided(int device, const gp_copy_desc *desc, int repeats, float *ms,
                                         gp_error *err)
{
    int64_t lowest, extent;
    gp_copy_span(desc, &lowest, &extent);
    const size_t size = static_cast<size_t>(desc->elem_size);
    return gp::time_resident(device, desc, extent * size, gp_copy_count(desc) * size, repeats, ms, err,
                             gp_cuda_copy_strided_resident, -lowest * size);
}

extern "C" int gp_cuda_time_correlate(int device, const gp_correlate_desc *desc, int repeats, float *ms,
                                      gp_error *err)
{
    const size_t element = static_cast<size_t>(gp_dtype_size(desc->dtype));
    return gp::time_resident(device, desc, element * desc->rows * desc->cols,
                             element * desc->out_rows * desc->out_cols, repeats, ms, err,
                             gp_cuda_correlate_resident);
}

extern "C" int gp_cuda_time_memcpy(int device, size_t nbytes, int repeats, float *ms, gp_error *err)
{
    using namespace gp;
    if (use_device(device, err)) return -1;
    DeviceBuffer source, target;
    if (source.allocate(nbytes, err) || target.allocate(nbytes, err)) return -1;
    GP_CUDA_TRY(cudaMemsetAsync(source.as<void>(), 0x5a, nbytes, work_stream()), err, "cudaMemsetAsync");
    if (time_repeats(repeats, ms, err, [&] {
            GP_CUDA_TRY(cudaMemcpyAsync(target.as<void>(), source.as<void>(), nbytes,
                                        cudaMemcpyDeviceToDevice, work_stream()),
                        err, "cudaMemcpyAsync");
            return 0;
        }))
        return -1;
    return synchronize(err, "timing");
}

extern "C" int gp_cuda_time_host_to_device(int device, const void *host, size_t nbytes, int repeats, float *ms,
                                           gp_error *err)
{
    using namespace gp;
    if (use_device(device, err)) return -1;
    DeviceBuffer target;
    if (target.allocate(nbytes, err)) return -1;
    if (time_repeats(repeats, ms, err, [&] {
            GP_CUDA_TRY(cudaMemcpyAsync(target.as<void>(), host, nbytes, cudaMemcpyHostToDevice, work_stream()),
                        err, "cudaMemcpyAsync");
            return 0;
        }))
        return -1;
    return synchronize(err, "timing");
}
