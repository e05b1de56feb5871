// Warp- and block-level building blocks shared by reduce and scan (the layering CUB uses:
// thread -> warp -> block -> device).  Warp collectives work on logical warps of `width` lanes
// (a power of two up to 32), so short rows can be processed several to a warp.
#pragma once

#include "common.cuh"

namespace gp {

constexpr unsigned full_mask = 0xffffffffu;
constexpr int warp_threads = 32;

// __shfl_xor_sync for any value a reduction combines: structs (argmin/argmax's value and index)
// word by word.
template <class T> __device__ __forceinline__ T shuffle_xor(T value, int mask, int width)
{
    if constexpr (cuda::std::is_arithmetic_v<T> || cuda::std::is_same_v<T, __half>) {
        return __shfl_xor_sync(full_mask, value, mask, width);
    } else {
        static_assert(sizeof(T) % sizeof(unsigned) == 0, "a struct of whole words");
        unsigned words[sizeof(T) / sizeof(unsigned)];
        memcpy(words, &value, sizeof value);
#pragma unroll
        for (unsigned &word : words) word = __shfl_xor_sync(full_mask, word, mask, width);
        memcpy(&value, words, sizeof value);
        return value;
    }
}

// A thread's reduction of its values value_at(0), ..., value_at(N - 1), folded in order as a tree:
// log2(N) dependent steps instead of a chain's N - 1, which shortens a tile's time in the scan's
// pipeline where a step is several instructions (a float cummax's NaN test, compare and select;
// perf-notes).  Min and max pick the same element however they are grouped; float sums and
// products round by the grouping, which this fixed tree keeps the same every run.
template <int N, class Op, class ValueAt> __device__ __forceinline__ auto thread_reduce(Op op, ValueAt value_at)
{
    using Acc = decltype(value_at(0));
    Acc values[N];
#pragma unroll
    for (int i = 0; i < N; ++i) values[i] = value_at(i);
#pragma unroll
    for (int step = 1; step < N; step *= 2)
#pragma unroll
        for (int i = 0; i + step < N; i += 2 * step) values[i] = op(values[i], values[i + step]);
    return values[0];
}

// Every lane of the logical warp receives the reduction of the logical warp's values.  The masks
// ascend, so that lane 0 combines neighbouring ranges of lanes, in lane order: a scan's min or max
// gives a tie to the right element there (other lanes may hold the other of two tied zeros).
template <class T, class Op> __device__ __forceinline__ T warp_reduce(T value, Op op, int width = 32)
{
    for (int mask = 1; mask < width; mask *= 2) value = op(value, shuffle_xor(value, mask, width));
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
// coalesced 16-byte vectors, while lane l works on elements [l*Items, (l+1)*Items), read and
// written as 16-byte vectors too.  Vector v lives in slot v ^ (row % 8), row = v / 8 (an XOR
// swizzle within 128-byte rows): both access patterns then touch 8 distinct 16-byte bank groups
// per quarter warp (no bank conflicts), and every vector stays 16-byte aligned, so the loads can
// go straight from global to shared memory (cp.async) without passing through registers.
template <int Items> struct WarpTile {
    static constexpr int warp_items = warp_threads * Items;
    template <class T> static constexpr int bytes = warp_items * static_cast<int>(sizeof(T));

    static __device__ __forceinline__ int slot(int vector) { return vector ^ ((vector >> 3) & 7); }

    template <class T> static __device__ __forceinline__ T &element(T *buffer, int e)
    {
        constexpr int per_vector = Vec16<T>::size;
        return buffer[slot(e / per_vector) * per_vector + e % per_vector];
    }

    // Copies src[0, valid) (valid may be <= 0) into the warp's buffer.
    template <class T> static __device__ void stage(const T *src, int64_t valid, T *buffer)
    {
        using Vec = Vec16<T>;
        static_assert(warp_items % (warp_threads * Vec::size) == 0, "items per thread must fill whole vectors");
        const int lane = threadIdx.x % warp_threads;
        if (valid >= warp_items && reinterpret_cast<uintptr_t>(src) % 16 == 0) {
#pragma unroll
            for (int k = 0; k < warp_items / Vec::size / warp_threads; ++k) {
                const int v = k * warp_threads + lane;
                copy_async(reinterpret_cast<Vec *>(buffer) + slot(v), reinterpret_cast<const Vec *>(src) + v);
            }
            wait_async_copies();
        } else {
#pragma unroll
            for (int i = 0; i < Items; ++i) {
                const int e = i * warp_threads + lane;
                if (e < valid) element(buffer, e) = src[e];
            }
        }
        __syncwarp();
    }

    // Calls f(i, x) for the lane's items i = 0..Items-1 in order, x its element as an operand of Op
    // (operand), or the identity past `valid`.
    template <class Op, class Acc, class T, class F>
    static __device__ __forceinline__ void visit(const T *buffer, int64_t valid, F &&f)
    {
        using Vec = Vec16<T>;
        constexpr int vectors = Items / Vec::size;  // per lane
        const int lane = threadIdx.x % warp_threads;
        const Vec *slots = reinterpret_cast<const Vec *>(buffer);
#pragma unroll
        for (int c = 0; c < vectors; ++c) {
            const Vec packed = slots[slot(lane * vectors + c)];
#pragma unroll
            for (int j = 0; j < Vec::size; ++j) {
                const int i = c * Vec::size + j;
                f(i, lane * Items + i < valid ? operand<Acc, Op>(packed.v[j]) : Op::template identity<Acc>());
            }
        }
    }

    // out item i = f(x) for the lane's items in order (see visit).  out may be in (same size T).
    template <class Op, class Acc, class In, class Out, class F>
    static __device__ __forceinline__ void transform(const In *in, Out *out, int64_t valid, F &&f)
    {
        using Vec = Vec16<Out>;
        constexpr int vectors = Items / Vec::size;  // per lane
        const int lane = threadIdx.x % warp_threads;
        Vec packed;
        visit<Op, Acc>(in, valid, [&](int i, Acc x) {
            packed.v[i % Vec::size] = f(x);
            if (i % Vec::size == Vec::size - 1)
                reinterpret_cast<Vec *>(out)[slot(lane * vectors + i / Vec::size)] = packed;
        });
    }

    // Copies the warp's buffer to dst[0, valid).
    template <class T> static __device__ void flush(T *dst, int64_t valid, const T *buffer)
    {
        using Vec = Vec16<T>;
        const int lane = threadIdx.x % warp_threads;
        __syncwarp();
        if (valid >= warp_items && reinterpret_cast<uintptr_t>(dst) % 16 == 0) {
#pragma unroll
            for (int k = 0; k < warp_items / Vec::size / warp_threads; ++k) {
                const int v = k * warp_threads + lane;
                reinterpret_cast<Vec *>(dst)[v] = reinterpret_cast<const Vec *>(buffer)[slot(v)];
            }
        } else {
#pragma unroll
            for (int i = 0; i < Items; ++i) {
                const int e = i * warp_threads + lane;
                if (e < valid) dst[e] = element(buffer, e);
            }
        }
    }
};

}  // namespace gp
