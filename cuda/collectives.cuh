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

// Rows shared out to logical warps of `width` lanes (several rows per hardware warp when width <
// 32), grid-stride.  Usage: for (base = first; base < rows; base += stride) row = base + group.
// Every lane of a hardware warp runs the same iterations, so shuffles stay converged.
struct LogicalWarpRows {
    int lane;        // lane within the logical warp
    int64_t group;   // logical warp within the hardware warp
    int64_t first;   // first row of this hardware warp
    int64_t stride;  // logical warps in the grid

    __device__ explicit LogicalWarpRows(int width)
        : lane(static_cast<int>(threadIdx.x % width)),
          group((threadIdx.x % warp_threads) / width),
          first((static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x / warp_threads * warp_threads) / width),
          stride(static_cast<int64_t>(gridDim.x) * blockDim.x / width)
    {
    }
};

// A warp's tile segment staged in shared memory (CUB's WARP_TRANSPOSE without the register
// copy): the warp moves its 32*Items contiguous elements between global and shared memory as
// coalesced 16-byte vectors, while lane l works on elements [l*Items, (l+1)*Items).  One padding
// slot per 32 elements keeps both access patterns free of bank conflicts for 4-byte elements.
template <int Items> struct WarpTile {
    static constexpr int warp_items = warp_threads * Items;
    static constexpr int slots = warp_items + warp_items / warp_threads;

    static __device__ __forceinline__ int slot(int element) { return element + element / warp_threads; }

    // Copies src[0, valid) (valid may be <= 0) into the warp's buffer.
    template <class T> static __device__ void stage(const T *src, int64_t valid, T *buffer)
    {
        using Vec = Vec16<T>;
        static_assert(Items % Vec::size == 0, "items per thread must fill whole vectors");
        const int lane = threadIdx.x % warp_threads;
        if (valid >= warp_items && reinterpret_cast<uintptr_t>(src) % 16 == 0) {
#pragma unroll
            for (int k = 0; k < Items / Vec::size; ++k) {
                const int v = k * warp_threads + lane;
                const Vec loaded = load_readonly(reinterpret_cast<const Vec *>(src) + v);
#pragma unroll
                for (int j = 0; j < Vec::size; ++j) buffer[slot(v * Vec::size + j)] = loaded.v[j];
            }
        } else {
#pragma unroll
            for (int i = 0; i < Items; ++i) {
                const int element = i * warp_threads + lane;
                if (element < valid) buffer[slot(element)] = src[element];
            }
        }
        __syncwarp();
    }

    // The lane's i-th element as Acc, or the identity past `valid`.
    template <class Op, class Acc, class T>
    static __device__ __forceinline__ Acc get(const T *buffer, int64_t valid, int i)
    {
        const int element = (threadIdx.x % warp_threads) * Items + i;
        return element < valid ? convert<Acc>(buffer[slot(element)]) : Op::template identity<Acc>();
    }

    template <class T> static __device__ __forceinline__ void put(T *buffer, int i, T value)
    {
        buffer[slot((threadIdx.x % warp_threads) * Items + i)] = value;
    }

    // Copies the warp's buffer to dst[0, valid).
    template <class T> static __device__ void flush(T *dst, int64_t valid, const T *buffer)
    {
        using Vec = Vec16<T>;
        static_assert(Items % Vec::size == 0, "items per thread must fill whole vectors");
        const int lane = threadIdx.x % warp_threads;
        __syncwarp();
        if (valid >= warp_items && reinterpret_cast<uintptr_t>(dst) % 16 == 0) {
#pragma unroll
            for (int k = 0; k < Items / Vec::size; ++k) {
                const int v = k * warp_threads + lane;
                Vec packed;
#pragma unroll
                for (int j = 0; j < Vec::size; ++j) packed.v[j] = buffer[slot(v * Vec::size + j)];
                reinterpret_cast<Vec *>(dst)[v] = packed;
            }
        } else {
#pragma unroll
            for (int i = 0; i < Items; ++i) {
                const int element = i * warp_threads + lane;
                if (element < valid) dst[element] = buffer[slot(element)];
            }
        }
    }
};

}  // namespace gp
