// Elementwise dtype conversion of device data (DeviceArray.astype, and the casts NumPy's dtype rules
// put before or after a reduction or scan of device-resident input).  Resident only: it has no
// streamed form.
#include "common.cuh"
#include "primitives.cuh"

namespace gp {
namespace {

struct ConvertTuning {
    static constexpr int threads = 256;
    static constexpr int blocks_per_sm = 8;  // grid-stride: enough blocks to fill the device once
};

// Floats are divided in their own precision, as numpy.true_divide(array, int) does.
template <class In> __device__ __forceinline__ In divide(In x, int64_t divisor)
{
    if constexpr (cuda::std::is_floating_point_v<In>) return divisor ? x / static_cast<In>(divisor) : x;
    else return x;
}

template <class In, class Out>
__global__ void __launch_bounds__(ConvertTuning::threads)
convert_kernel(const In *in, Out *out, int64_t count, int64_t divisor)
{
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x)
        out[i] = convert<Out>(divide(in[i], divisor));
}

}  // namespace

int convert_resident(int device, const gp_call &call, gp_error *err)
{
    const gp_convert_args &args = call.convert;
    if (args.count <= 0) return 0;
    int64_t blocks = ceil_div(args.count, ConvertTuning::threads);
    const int64_t max_blocks = static_cast<int64_t>(multiprocessor_count(device)) * ConvertTuning::blocks_per_sm;
    if (blocks > max_blocks) blocks = max_blocks;
    return dispatch_dtype(args.in_dtype, err, [&](auto in_tag) {
        using In = typename decltype(in_tag)::type;
        return dispatch_dtype(args.out_dtype, err, [&](auto out_tag) {
            using Out = typename decltype(out_tag)::type;
            convert_kernel<In, Out><<<static_cast<unsigned>(blocks), ConvertTuning::threads, 0, work_stream()>>>(
                static_cast<const In *>(call.in), static_cast<Out *>(call.out), args.count, args.divisor);
            GP_CHECK_LAUNCH(err, "convert_kernel");
            return 0;
        });
    });
}

}  // namespace gp
