// CUB's device-wide inclusive sum and sum, for the benchmark's `cub` rows: gpuprims.bench.cub
// compiles this file with nvcc when a run needs it.  It is not part of the extension.
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include <cstdint>
#include <limits>

namespace {

// f(T{}) for the dtype code of gpuprims.bench.cub.DTYPES.
template <class F> cudaError_t by_dtype(int dtype, F &&f)
{
    switch (dtype) {
    case 0: return f(float{});
    case 1: return f(double{});
    case 2: return f(int64_t{});
    default: return cudaErrorInvalidValue;
    }
}

// f(n) as a 32-bit count where it fits, as CUB's users call it (a 64-bit count instantiates other
// kernels), else as a 64-bit one.
template <class F> cudaError_t by_count(int64_t n, F &&f)
{
    return n <= std::numeric_limits<int>::max() ? f(static_cast<int>(n)) : f(n);
}

}  // namespace

extern "C" {

const char *gp_cub_error_string(int error) { return cudaGetErrorString(static_cast<cudaError_t>(error)); }

// Both calls follow CUB's convention: with `scratch` null they set *scratch_bytes and run nothing.
// They return a cudaError_t (CUB checks its launches).
int gp_cub_inclusive_sum(int dtype, const void *in, void *out, int64_t n, void *scratch, size_t *scratch_bytes,
                         void *stream)
{
    return by_dtype(dtype, [&](auto zero) {
        using T = decltype(zero);
        return by_count(n, [&](auto items) {
            return cub::DeviceScan::InclusiveSum(scratch, *scratch_bytes, static_cast<const T *>(in),
                                                 static_cast<T *>(out), items, static_cast<cudaStream_t>(stream));
        });
    });
}

int gp_cub_sum(int dtype, const void *in, void *out, int64_t n, void *scratch, size_t *scratch_bytes, void *stream)
{
    return by_dtype(dtype, [&](auto zero) {
        using T = decltype(zero);
        return by_count(n, [&](auto items) {
            return cub::DeviceReduce::Sum(scratch, *scratch_bytes, static_cast<const T *>(in), static_cast<T *>(out),
                                          items, static_cast<cudaStream_t>(stream));
        });
    });
}

}  // extern "C"
