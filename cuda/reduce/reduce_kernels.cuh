// Reduction kernels over the canonical (outer, n, inner) view, with their tuning and launch geometry.
// Shared by reduce/reduce.cu and scan/scan.cu (the column scan uses reduce_columns_kernel for its
// per-chunk totals, and the short-row scan the block size).
#pragma once

#include "collectives.cuh"
#include "reduce/reduce_ops.cuh"

namespace gp {

// Tuning constants of the reduction kernels.
struct ReduceTuning {
    static constexpr int threads = 256;          // block size of every reduction kernel
    static constexpr int unroll = 4;             // 16-byte loads in flight per thread
    static constexpr int oversubscription = 2;   // blocks per resident block slot: balances SMs
    // Rows up to this length take a (sub)warp each, unless they are at least a block long and too
    // few for their warps to fill every SM (grid_threads_per_sm): a block each then shares the
    // row, where a lone warp would walk it one dependent load after another (the 1,056 partials
    // of a 2^28 var on the H200: 16.8 us on a warp, 8.4 on a block).
    static constexpr int64_t warp_rows_max_n = 2048;
    static constexpr int64_t min_column_chunk = 64;   // fewest rows a column chunk reduces
    // Rows a column kernel's thread loads at once (into 4 accumulators): 8 against 4 took argmax
    // of 16384^2 float32 along axis 0 from 0.86x to 0.97x memcpy on the H200.
    static constexpr int column_rows_in_flight = 8;
    // Grid caps of the grid-stride kernels (sizing rules from the first version, not measured
    // optima): short rows take at most this many blocks per SM, and a warp each only when their
    // warps fill this many threads per SM (an sm_80/sm_90 SM's most resident threads); the column
    // kernels take at most max_column_blocks.
    static constexpr int64_t short_rows_blocks_per_sm = 64;
    static constexpr int64_t grid_threads_per_sm = 2048;
    static constexpr int64_t max_column_blocks = int64_t(1) << 20;
};

// One thread's share of row[begin, end), which `stride` threads share (this one is number
// `first`): they stride over 16-byte vectors between a scalar head (up to the first 16-byte
// boundary) and a scalar tail.  Each vector lane keeps its own accumulator (but var's, below),
// which gives independent add chains and shorter float rounding chains.  Element i is lifted
// (reduce_ops.cuh) at index base + i.
template <class Acc, class Op, class In>
__device__ Acc thread_reduce_vectors(const In *row, int64_t begin, int64_t end, int64_t first,
                                     int64_t stride, Op op, int64_t base)
{
    using Vec = Vec16<In>;
    constexpr int width = Vec::size;
    constexpr int unroll = ReduceTuning::unroll;
    // var/std/mean's 32-byte Moments: one accumulator a thread (with one a lane, 4 blocks an SM
    // fit instead of 5: 0.94x against 1.05x memcpy for a 2^28 float32 var on the H200).
    constexpr int lanes = is_moments<Op> ? 1 : width;
    Acc acc[lanes];
#pragma unroll
    for (int j = 0; j < lanes; ++j) acc[j] = Op::template identity<Acc>();

    const uintptr_t address = reinterpret_cast<uintptr_t>(row + begin);
    int64_t head = static_cast<int64_t>(((16 - address % 16) % 16) / sizeof(In));
    if (head > end - begin) head = end - begin;
    const int64_t body_begin = begin + head;
    const int64_t vectors = (end - body_begin) / width;
    const Vec *body = reinterpret_cast<const Vec *>(row + body_begin);

    if (first < head) acc[0] = accumulate(op, acc[0], row[begin + first], base + begin + first);

    int64_t v = first;
    for (; v + (unroll - 1) * stride < vectors; v += unroll * stride) {
        Vec loaded[unroll];
#pragma unroll
        for (int u = 0; u < unroll; ++u) loaded[u] = load_readonly(body + v + u * stride);
#pragma unroll
        for (int u = 0; u < unroll; ++u)
#pragma unroll
            for (int j = 0; j < width; ++j)
                acc[j % lanes] =
                    accumulate(op, acc[j % lanes], loaded[u].v[j], base + body_begin + (v + u * stride) * width + j);
    }
    for (; v < vectors; v += stride) {
        const Vec loaded = load_readonly(body + v);
#pragma unroll
        for (int j = 0; j < width; ++j)
            acc[j % lanes] = accumulate(op, acc[j % lanes], loaded.v[j], base + body_begin + v * width + j);
    }
    for (int64_t i = body_begin + vectors * width + first; i < end; i += stride)
        acc[0] = accumulate(op, acc[0], row[i], base + i);

#pragma unroll
    for (int j = 1; j < lanes; ++j) acc[0] = op(acc[0], acc[j]);
    return acc[0];
}

// thread_reduce_vectors, or for partial results wider than a vector (var/std's) one at a time.
template <class Acc, class Op, class In>
__device__ Acc thread_reduce_range(const In *row, int64_t begin, int64_t end, int64_t first,
                                   int64_t stride, Op op, int64_t base)
{
    if constexpr (sizeof(In) > 16) {
        Acc acc = Op::template identity<Acc>();
        for (int64_t i = begin + first; i < end; i += stride) acc = accumulate(op, acc, row[i], base + i);
        return acc;
    } else {
        return thread_reduce_vectors<Acc>(row, begin, end, first, stride, op, base);
    }
}

// Long rows (inner == 1): gridDim.x blocks share each row, their threads interleaved over its
// vectors (the whole grid sweeps the row front to back together, which the DRAM serves better
// than one contiguous chunk per block: 1.05x against 1.035x memcpy at 2^28 float32); gridDim.y
// walks the rows.  Writes out[row * gridDim.x + blockIdx.x]: the result when one block covers a
// row, else a partial that a second launch over the partials reduces.  Element k of a row is
// lifted at index base + k (argmin/argmax: a streamed tile's first row along n).
template <class Op, class In, class Acc, class Out>
__global__ void __launch_bounds__(ReduceTuning::threads)
reduce_rows_kernel(const In *in, Out *out, int64_t rows, int64_t n, int64_t base, Op op)
{
    constexpr int threads = ReduceTuning::threads;
    __shared__ Acc scratch[threads / warp_threads];
    const int64_t first = static_cast<int64_t>(blockIdx.x) * threads + threadIdx.x;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * threads;
    for (int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
        Acc acc = thread_reduce_range<Acc>(in + row * n, 0, n, first, stride, op, base);
        acc = block_reduce<threads>(acc, op, scratch);
        if (threadIdx.x == 0) out[row * gridDim.x + blockIdx.x] = result<Out>(op, acc);
    }
}

// Short rows (inner == 1): a logical warp of `width` lanes per row, several rows per warp when
// rows are shorter than 32; loads are coalesced across the logical warp.
template <class Op, class In, class Acc, class Out>
__global__ void __launch_bounds__(ReduceTuning::threads)
reduce_short_rows_kernel(const In *in, Out *out, int64_t rows, int64_t n, int width, int64_t base, Op op)
{
    const LogicalWarpRows assigned(width);
    for (int64_t first_row = assigned.first; first_row < rows; first_row += assigned.stride) {
        const int64_t row = first_row + assigned.group;
        Acc acc = Op::template identity<Acc>();
        if (row < rows)
            for (int64_t i = assigned.lane; i < n; i += width) acc = accumulate(op, acc, in[row * n + i], base + i);
        acc = warp_reduce(acc, op, width);
        if (row < rows && assigned.lane == 0) out[row] = result<Out>(op, acc);
    }
}

// inner > 1: one thread per (outer, inner) column walks its chunk of n with stride `inner`, so a
// warp reads consecutive addresses.  gridDim.y splits n into chunks when there are too few columns
// to fill the GPU; out is then [outer][chunks][inner] partials.  Row k is lifted at index base + k.
// InOrder (a scan's chunk totals): the elements combined in order, as the scan's outputs combine
// them (a min's or max's tie of zeros goes to the later one), not in four interleaved accumulators.
template <class Op, class In, class Acc, class Out, bool InOrder = false>
__global__ void __launch_bounds__(ReduceTuning::threads)
reduce_columns_kernel(const In *in, Out *out, int64_t outer, int64_t n, int64_t inner, int64_t chunk,
                      int64_t base = 0, Op op = {})
{
    const int64_t columns = outer * inner;
    const int64_t chunks = gridDim.y;
    const int64_t begin = blockIdx.y * chunk;
    const int64_t end = begin + chunk < n ? begin + chunk : n;
    for (int64_t column = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
         column < columns; column += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const int64_t o = column / inner, i = column - o * inner;
        const In *p = in + o * n * inner + i;
        constexpr int in_flight = ReduceTuning::column_rows_in_flight;
        Acc acc[4] = {Op::template identity<Acc>(), Op::template identity<Acc>(),
                      Op::template identity<Acc>(), Op::template identity<Acc>()};
        int64_t k = begin;
        if constexpr (InOrder) {
            for (; k + in_flight - 1 < end; k += in_flight)
                acc[0] = op(acc[0], thread_reduce<in_flight>(
                                        op, [&](int u) { return lift<Acc>(op, p[(k + u) * inner], base + k + u); }));
        } else {
            for (; k + in_flight - 1 < end; k += in_flight)
#pragma unroll
                for (int u = 0; u < in_flight; ++u)
                    acc[u % 4] = accumulate(op, acc[u % 4], p[(k + u) * inner], base + k + u);
        }
        for (; k < end; ++k) acc[0] = accumulate(op, acc[0], p[k * inner], base + k);
        acc[0] = op(op(acc[0], acc[1]), op(acc[2], acc[3]));
        out[(o * chunks + blockIdx.y) * inner + i] = result<Out>(op, acc[0]);
    }
}

// Blocks of `kernel` (ReduceTuning::threads each) that one SM of `device` holds at once (1 where the
// query fails: the launch is then sized for fewer blocks, still correct).
template <class Kernel> int resident_blocks_per_sm(int device, Kernel kernel)
{
    gp_error ignored;
    int blocks = 1;
    if (blocks_per_sm(device, reinterpret_cast<const void *>(kernel), ReduceTuning::threads, 0, &ignored, blocks))
        blocks = 1;
    return blocks;
}

// Launch geometry for the column kernels (blockIdx.x over columns, blockIdx.y over chunks of n).
struct ColumnGrid {
    dim3 grid;
    int64_t chunk, chunks;
};

// When the columns' blocks do not fill the device, n is cut into as many chunks as make the grid
// one whole wave of the kernel's `blocks_per_sm` resident blocks on every SM: a second, partial
// wave leaves most SMs idle (argmax of 16384^2 float32 along axis 0, 6 resident blocks an SM, ran
// 1.37 waves at 0.70x memcpy on the H200 when the grid aimed at 2048 threads an SM).
inline ColumnGrid column_grid(int device, int blocks_per_sm, int64_t outer, int64_t n, int64_t inner)
{
    int64_t blocks = ceil_div(outer * inner, ReduceTuning::threads);
    if (blocks > ReduceTuning::max_column_blocks) blocks = ReduceTuning::max_column_blocks;
    const int64_t wave = static_cast<int64_t>(multiprocessor_count(device)) * blocks_per_sm;
    int64_t chunks = 1;
    if (blocks < wave) {
        chunks = wave / blocks;
        const int64_t max_chunks = ceil_div(n, ReduceTuning::min_column_chunk);
        if (chunks > max_chunks) chunks = max_chunks;
        if (chunks > LaunchLimits::max_grid_y) chunks = LaunchLimits::max_grid_y;
        if (chunks < 1) chunks = 1;
    }
    const int64_t chunk = ceil_div(n, chunks);
    chunks = ceil_div(n, chunk);
    return {dim3(static_cast<unsigned>(blocks), static_cast<unsigned>(chunks)), chunk, chunks};
}

}  // namespace gp
