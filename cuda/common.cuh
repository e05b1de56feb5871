// Element types, accumulator types, reduction operators and the one dtype dispatch table of the
// CUDA backend.
#pragma once

#include <cuda_fp16.h>
#include <cuda/std/limits>
#include <cuda/std/type_traits>
#include <climits>
#include <cstdint>

#include "contract/gp_dtype.h"
#include "runtime/runtime.cuh"

namespace gp {

template <class T> struct type_tag { using type = T; };

// The dtype dispatch table, generated from the dtype table (GP_DTYPES' device storage types):
// calls f(type_tag<T>{}) with the C++ type that stores `dtype` on the device.
template <class F> int dispatch_dtype(gp_dtype dtype, gp_error *err, F &&f)
{
    switch (dtype) {
#define GP_DISPATCH_DTYPE(NAME, numpy_name, kind, size, host_storage, device_storage) \
    case GP_##NAME: return f(type_tag<device_storage>{});
        GP_DTYPES(GP_DISPATCH_DTYPE)
#undef GP_DISPATCH_DTYPE
    default: return fail(err, GP_ERR_INVALID, "unsupported dtype");
    }
}

// The same table at compile time: device_type<D>::type stores dtype D, and dtype_of<T> is the
// dtype T stores.
template <gp_dtype D> struct device_type;
template <class T> inline constexpr gp_dtype dtype_of = GP_NUM_DTYPES;
#define GP_DEVICE_TYPE(NAME, numpy_name, kind, size, host_storage, device_storage) \
    template <> struct device_type<GP_##NAME> { using type = device_storage; };  \
    template <> inline constexpr gp_dtype dtype_of<device_storage> = GP_##NAME;
GP_DTYPES(GP_DEVICE_TYPE)
#undef GP_DEVICE_TYPE

// For copies, which move elements as raw words: calls f(type_tag<W>{}) with the unsigned integer
// type of `bytes` (1, 2, 4 or 8).
template <class F> int dispatch_element_size(int64_t bytes, gp_error *err, F &&f)
{
    switch (bytes) {
    case 1: return f(type_tag<uint8_t>{});
    case 2: return f(type_tag<uint16_t>{});
    case 4: return f(type_tag<uint32_t>{});
    case 8: return f(type_tag<uint64_t>{});
    default: return fail(err, GP_ERR_INVALID, "element size must be 1, 2, 4 or 8 bytes");
    }
}

// How sums, products and scans with result dtype Out accumulate (the accumulator rule, gp_dtype.h):
// in the accumulator type of Out's partial dtype (gp_partial_dtype), uint64_t for integers (signed
// and unsigned alike wrap around as two's complement) and the float type itself for floats.  The
// result is written as that accumulator where Out is its own partial dtype (integer results, int64
// and uint64 alike, are the accumulator's 64-bit word), else in Out's storage type (float16).
template <gp_dtype Out> struct accumulation {
    static constexpr gp_dtype partial = gp_partial_dtype(Out);
    using acc = cuda::std::conditional_t<gp_dtype_is_float(partial), typename device_type<partial>::type, uint64_t>;
    using out = cuda::std::conditional_t<partial == Out, acc, typename device_type<Out>::type>;
};

// The accumulator of GPU float sums and products that are not left to the rule: double in place of
// float.  A product of factors near 1 loses their cross term when it is below float32's half ulp, an
// error of one sign: float32 products of factors within 1e-3 of 1 come out 0.012 ulp low on average
// (0.12 within 1e-4), so a tree of them (a block's reduction, a tile's scan) drifts with n, where
// NumPy's running product, whose mantissa wanders, does not (cumprod of 2^24 such factors: 8.3e-3
// off against NumPy's 9.7e-5, H200).
template <class Acc> using widened_float = cuda::std::conditional_t<cuda::std::is_same_v<Acc, float>, double, Acc>;

// Sum, product and scan: calls f(type_tag<Acc>{}, type_tag<Out>{}) with accumulation<out>'s types.
// Only the (In, out) pairs gp_accumulate_supported allows are instantiated.
template <class In, class F> int dispatch_accumulator(gp_dtype out, gp_error *err, F &&f)
{
    constexpr gp_dtype in = dtype_of<In>;
    switch (out) {
#define GP_DISPATCH_ACCUMULATOR(NAME, numpy_name, kind, size, host_storage, device_storage) \
    case GP_##NAME:                                                                        \
        if constexpr (gp_accumulate_supported(in, GP_##NAME)) {                            \
            using Rule = accumulation<GP_##NAME>;                                          \
            return f(type_tag<typename Rule::acc>{}, type_tag<typename Rule::out>{});      \
        }                                                                                  \
        break;
        GP_DTYPES(GP_DISPATCH_ACCUMULATOR)
#undef GP_DISPATCH_ACCUMULATOR
    default: break;
    }
    return fail(err, GP_ERR_INVALID, "unsupported accumulator dtype for this input");
}

// Min/max compare in a type at least 32 bits wide (warp shuffles move 32- or 64-bit words).
template <class In> struct minmax_accumulator { using type = In; };
template <> struct minmax_accumulator<bool> { using type = uint32_t; };
template <> struct minmax_accumulator<int8_t> { using type = int32_t; };
template <> struct minmax_accumulator<int16_t> { using type = int32_t; };
template <> struct minmax_accumulator<uint8_t> { using type = uint32_t; };
template <> struct minmax_accumulator<uint16_t> { using type = uint32_t; };
template <> struct minmax_accumulator<__half> { using type = float; };

// Value conversion between storage and accumulator types.  Signed integers widen to uint64_t by
// sign extension, so uint64_t arithmetic wraps exactly like int64 arithmetic.  Host code uses it
// too (correlate.cu converts masks before launch).
template <class To, class From> __host__ __device__ __forceinline__ To convert(From x)
{
    if constexpr (cuda::std::is_same_v<From, To>) {
        return x;
    } else if constexpr (cuda::std::is_same_v<From, __half>) {
        return convert<To>(__half2float(x));
    } else if constexpr (cuda::std::is_same_v<To, __half> && cuda::std::is_same_v<From, double>) {
        return __double2half(x);  // one rounding, as NumPy (not through float)
    } else if constexpr (cuda::std::is_same_v<To, __half>) {
        return __float2half_rn(static_cast<float>(x));
    } else if constexpr (cuda::std::is_same_v<To, uint64_t> && cuda::std::is_signed_v<From> &&
                         cuda::std::is_integral_v<From>) {
        return static_cast<uint64_t>(static_cast<int64_t>(x));
    } else if constexpr (cuda::std::is_floating_point_v<From> && cuda::std::is_integral_v<To> &&
                         !cuda::std::is_same_v<To, bool> && !cuda::std::is_same_v<To, int64_t>) {
        // Through int64 and truncated, as NumPy's casts behave on x86-64 (negative and other
        // out-of-range values wrap; a direct GPU conversion would saturate instead).  uint64
        // values from 2^63 up need the unsigned conversion.
        if constexpr (cuda::std::is_same_v<To, uint64_t>)
            if (x >= static_cast<From>(9223372036854775808.0)) return static_cast<uint64_t>(x);
        return static_cast<To>(static_cast<int64_t>(x));
    } else {
        return static_cast<To>(x);
    }
}

template <class T> __device__ __forceinline__ bool is_nan(T x)
{
    if constexpr (cuda::std::is_floating_point_v<T>) return x != x;
    else return false;
}

// Reductions start from +0.0, as NumPy's sums (numpy.sum([-0.0]) is 0.0).
struct SumOp {
    template <class T> static __device__ __forceinline__ T identity() { return T(0); }
    template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};

// Scans start a float sum from -0.0, the identity of IEEE addition, so that the outputs keep the
// sign of the elements' zeros (numpy.cumsum([-0.0]) is [-0.0]); numpy_sum() below gives an
// exclusive scan's outputs NumPy's +0.0 start.
struct ScanSumOp : SumOp {
    template <class T> static __device__ __forceinline__ T identity()
    {
        if constexpr (cuda::std::is_floating_point_v<T>) return T(-0.0);
        else return T(0);
    }
};

struct ProdOp {
    template <class T> static __device__ __forceinline__ T identity() { return T(1); }
    template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a * b; }
};

// NaN wins, as in numpy.minimum/maximum; the identity is +inf/-inf or the type's extreme value.
struct MinOp {
    template <class T> static __device__ __forceinline__ T identity()
    {
        if constexpr (cuda::std::is_floating_point_v<T>) return cuda::std::numeric_limits<T>::infinity();
        else return cuda::std::numeric_limits<T>::max();
    }
    template <class T> __device__ __forceinline__ T operator()(T a, T b) const
    {
        return (is_nan(a) || a < b) ? a : b;
    }
};

struct MaxOp {
    template <class T> static __device__ __forceinline__ T identity()
    {
        if constexpr (cuda::std::is_floating_point_v<T>) return -cuda::std::numeric_limits<T>::infinity();
        else return cuda::std::numeric_limits<T>::lowest();
    }
    template <class T> __device__ __forceinline__ T operator()(T a, T b) const
    {
        return (is_nan(a) || a > b) ? a : b;
    }
};

// float16's min and max: a tie (two zeros of either sign) goes to the earlier element, as in NumPy's
// half-precision loops (a >= b ? a : b), where its float32 and float64 loops give it to the later
// (np.maximum.accumulate([-0.0, 0.0]) is [-0.0, 0.0], for float16 [-0.0, -0.0]).
struct HalfMinOp : MinOp {
    template <class T> __device__ __forceinline__ T operator()(T a, T b) const
    {
        return (is_nan(a) || a <= b) ? a : b;
    }
};

struct HalfMaxOp : MaxOp {
    template <class T> __device__ __forceinline__ T operator()(T a, T b) const
    {
        return (is_nan(a) || a >= b) ? a : b;
    }
};

// An operator that reads NaN elements as its identity (nancumsum reads them as 0, nancumprod as 1):
// Op itself for combining partials, which stay NaN where the data's own arithmetic made one.
template <class Op> struct IgnoreNan : Op {};
template <class Op> inline constexpr bool ignores_nan = false;
template <class Op> inline constexpr bool ignores_nan<IgnoreNan<Op>> = true;
// The operator that combines Op's partials: Op without IgnoreNan.
template <class Op> struct plain_operator { using type = Op; };
template <class Op> struct plain_operator<IgnoreNan<Op>> { using type = Op; };

template <class Op>
inline constexpr bool is_sum = cuda::std::is_base_of_v<SumOp, typename plain_operator<Op>::type>;

// A scan's running sum as NumPy's start from +0.0 would make it: a sum of negative zeros alone,
// -0.0 from ScanSumOp, becomes +0.0; any other value, and other operators' values, as they are.
template <class Op, class Acc> __device__ __forceinline__ Acc numpy_sum(Acc value)
{
    if constexpr (is_sum<Op> && cuda::std::is_floating_point_v<Acc>) return value + Acc(0);
    else return value;
}

// An element of the data as an operand of Op in the accumulator type: converted, and for an
// IgnoreNan operator a NaN replaced by the identity; a sum's by +0.0, as NumPy's nancumsum.
template <class Acc, class Op, class T> __device__ __forceinline__ Acc operand(T x)
{
    const Acc value = convert<Acc>(x);
    if constexpr (ignores_nan<Op> && is_sum<Op>) return is_nan(value) ? Acc(0) : value;
    else if constexpr (ignores_nan<Op>) return is_nan(value) ? Op::template identity<Acc>() : value;
    else return value;
}

// 16-byte vector of T for wide loads.
template <class T> struct alignas(16) Vec16 {
    static constexpr int size = 16 / sizeof(T);
    T v[size];
};

// A 16-byte load through the read-only (non-coherent) path: the kernels never write their input.
template <class T> __device__ __forceinline__ Vec16<T> load_readonly(const Vec16<T> *address)
{
    const int4 bits = __ldg(reinterpret_cast<const int4 *>(address));
    Vec16<T> value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

// Starts a 16-byte copy from global to shared memory that does not pass through registers
// (cp.async, sm_80+; a plain load and store before).  wait_async_copies() completes the thread's
// copies; a barrier then makes them visible to other threads.
template <class T> __device__ __forceinline__ void copy_async(Vec16<T> *shared, const Vec16<T> *global)
{
#if __CUDA_ARCH__ >= 800
    const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(address), "l"(global) : "memory");
#else
    *shared = load_readonly(global);
#endif
}

__device__ __forceinline__ void wait_async_copies()
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

// What one kernel launch may ask for, on every architecture gpuprims builds for.
struct LaunchLimits {
    static constexpr int64_t max_grid_x = INT_MAX;  // blocks along x
    static constexpr int64_t max_grid_y = 65535;    // blocks along y
    // Threads an SM holds on the architecture being compiled: 1024 on Turing, 1536 on sm_86,
    // sm_89 and sm_12x, 2048 elsewhere (the host pass has no __CUDA_ARCH__ and no use for it).
#if !defined(__CUDA_ARCH__) || (__CUDA_ARCH__ != 750 && __CUDA_ARCH__ != 860 && __CUDA_ARCH__ != 890 && __CUDA_ARCH__ < 1200)
    static constexpr int max_threads_per_sm = 2048;
#elif __CUDA_ARCH__ == 750
    static constexpr int max_threads_per_sm = 1024;
#else
    static constexpr int max_threads_per_sm = 1536;
#endif
    // __launch_bounds__'s minimum blocks per SM: `wanted`, as far as the SM holds them (ptxas
    // ignores a larger minimum, with a warning, and caps no registers at all).
    static constexpr int min_blocks(int threads, int wanted)
    {
        return wanted * threads <= max_threads_per_sm ? wanted : max_threads_per_sm / threads;
    }
};

__host__ __device__ constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
__host__ __device__ constexpr int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// Persistent grid: as many blocks of `kernel` as fit on the device at once (blocks_per_sm), no more
// than there are tiles.
template <class Kernel>
int launch_persistent(int device, Kernel kernel, dim3 threads, size_t shared, int64_t tiles, gp_error *err,
                      unsigned &blocks)
{
    int per_sm = 0;
    if (blocks_per_sm(device, reinterpret_cast<const void *>(kernel), static_cast<int>(threads.x * threads.y), shared,
                      err, per_sm))
        return -1;
    const int64_t resident = static_cast<int64_t>(multiprocessor_count(device)) * per_sm;
    blocks = static_cast<unsigned>(tiles < resident ? tiles : resident);
    return 0;
}

}  // namespace gp
