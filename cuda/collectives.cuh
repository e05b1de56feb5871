// Warp- and block-level building blocks shared by reduce and scan (the layering CUB uses:
// thread -> warp -> block -> device).  Warp collectives work on logical warps of `width` lanes
// (a power of two up to 32), so short rows can be processed several to a warp.
#pragma once

#include "common.cuh"

namespace gp {

constexpr unsigned full_mask = 0xffffffffu;
constexpr int warp_threads = 32;

// Every lane of the logical warp receives the reduction of the logical warp's values.
template <class T, class Op> __device__ __forceinline__ T warp_reduce(T value, Op op, int width = 32)
{
    for (int mask = width / 2; mask > 0; mask /= 2)
        value = op(value, __shfl_xor_sync(full_mask, value, mask, width));
    return value;
}

// Inclusive scan across the logical warp (lane order).
template <class T, class Op>
__device__ __forceinline__ T warp_inclusive_scan(T value, Op op, int width = 32)
{
    const int lane = threadIdx.x % width;
    for (int delta = 1; delta < width; delta *= 2) {
        T other = __shfl_up_sync(full_mask, value, delta, width);
        if (lane >= delta) value = op(other, value);
    }
    return value;
}

// Reduction across the block; every thread receives the result.  `scratch` holds one T per warp.
// The trailing barrier lets the caller reuse `scratch` at once.
template <int Threads, class T, class Op> __device__ T block_reduce(T value, Op op, T *scratch)
{
    constexpr int warps = Threads / warp_threads;
    const int warp = threadIdx.x / warp_threads, lane = threadIdx.x % warp_threads;
    value = warp_reduce(value, op);
    if (lane == 0) scratch[warp] = value;
    __syncthreads();
    T total = lane < warps ? scratch[lane] : Op::template identity<T>();
    total = warp_reduce(total, op);
    __syncthreads();
    return total;
}

// Exclusive scan across the block (thread order).  Returns the thread's exclusive prefix and sets
// `total` in every thread.  `scratch` holds one T per warp.
template <int Threads, class T, class Op>
__device__ T block_exclusive_scan(T value, Op op, T *scratch, T &total)
{
    constexpr int warps = Threads / warp_threads;
    const int warp = threadIdx.x / warp_threads, lane = threadIdx.x % warp_threads;
    T inclusive = warp_inclusive_scan(value, op);
    if (lane == warp_threads - 1) scratch[warp] = inclusive;
    __syncthreads();
    T warp_total = lane < warps ? scratch[lane] : Op::template identity<T>();
    T warp_prefix_inclusive = warp_inclusive_scan(warp_total, op);
    total = __shfl_sync(full_mask, warp_prefix_inclusive, warps - 1);
    T warp_prefix = __shfl_up_sync(full_mask, warp_prefix_inclusive, 1);
    if (lane == 0) warp_prefix = Op::template identity<T>();
    warp_prefix = __shfl_sync(full_mask, warp_prefix, warp);  // this warp's prefix
    T exclusive = __shfl_up_sync(full_mask, inclusive, 1);
    if (lane == 0) exclusive = Op::template identity<T>();
    __syncthreads();
    return op(warp_prefix, exclusive);
}

}  // namespace gp
