// Correlation of an image with a mask: the one primitive behind numpy.convolve/correlate and
// scipy.signal.convolve2d/correlate2d (convolution is correlation with the mask reversed, and a
// 1-D signal is an image of one row).  See gp_correlate_args.
//   mask_rows == 1: correlate_rows_kernel.  A tile is RowTuning::tile consecutive outputs of one
//                   row, RowTuning::items per thread, computed from a shared-memory copy of the
//                   input segment they need (the tile plus a halo of mask_cols - 1).
//   mask_rows > 1:  correlate_tiles_kernel.  A tile is a 2-D block of outputs, each thread a few
//                   column strips of TileTuning::items_y outputs, computed from a shared-memory
//                   copy of its input with halos on both axes.  The common small square masks
//                   (FixedShape) are compiled with their extents; any other runs in chunks of taps.
// Both kernels are persistent and double-buffered: the next tile's input is copied with cp.async
// while the current one is computed.  Staging resolves the boundary mode in the index mapping:
// interior tiles move as aligned 16-byte vectors with no per-element tests, and the compute loops
// never test bounds.  Masks larger than one staged segment (long 1-D masks, 2-D masks beyond
// TileTuning::max_chunk on a side) are processed in chunks of taps, so any mask size works in
// bounded shared memory.
//
// Where the mask lives: a mask of up to MaskTuning::param_bytes travels as a kernel parameter.
// Parameters sit in the constant bank and are read through the constant cache, exactly like a
// __constant__ array, but every launch carries its own copy.  gpuprims is called from several
// host threads at once, each on its own stream, while a __constant__ symbol is one per device: one
// call's cudaMemcpyToSymbolAsync could overwrite the mask of another call's kernel that has not run
// yet, and making that safe would mean holding a lock until each kernel finished, serialising all
// calls.  Longer masks are uploaded per call and read from global memory (warp-uniform loads that
// hit in L1).
//
// The streamed form, which correlates tiles of output rows (or blocks of rows by columns) with the
// input they read, is in correlate_tiler.cu.
#include <cuda_pipeline.h>

#include <memory>
#include <new>

#include "common.cuh"
#include "correlate/correlate.cuh"
#include "primitives.cuh"

namespace gp {

// The tuning structs have external linkage: nvcc 13.0 warns (#114) about member variable templates
// of types inside an anonymous namespace.  Everything else here is file-private.

struct MaskTuning {
    static constexpr int param_bytes = 1024;  // masks up to this size are kernel parameters
};

// Shared by both kernels.
struct CorrelateTuning {
    // Taps per register window: the window holds items + tap_group - 1 inputs, and every staged
    // buffer carries tap_group elements (rows) of slack so that the last window may read past it.
    static constexpr int tap_group = 8;
};

struct RowTuning {
    static constexpr int threads = 256;
    // Consecutive outputs per thread.  Odd, so that the lanes' shared-memory reads (9 elements
    // apart) fall in distinct banks.
    static constexpr int items = 9;
    static constexpr int tile = threads * items;  // outputs per tile, and taps per chunk
};

struct TileTuning {
    static constexpr int threads_x = 32, threads_y = 8;
    static constexpr int items_y = 8;  // outputs per thread down a column (a window over mask rows)
    static constexpr int strips = 2;   // columns per thread, threads_x apart (conflict-free reads)
    static constexpr int tile_rows = threads_y * items_y, tile_cols = threads_x * strips;
    static constexpr int max_chunk = 32;  // mask rows and columns staged at once (RuntimeShape)
    // Blocks per SM the register allocation must allow: 4 (64 registers) where that does not
    // spill, fewer for wide accumulators and the larger unrolled masks.
    template <class T, int MaskCols>
    static constexpr int min_blocks = sizeof(T) == 8 ? 2 : MaskCols <= 5 ? 4 : 3;
};

namespace {

// The accumulator of each storage type: float16 sums in float, as NumPy's half dot does; integers
// multiply and add in unsigned arithmetic of at least 32 bits, which wraps exactly as NumPy and
// SciPy do once truncated to the output width; bool keeps NumPy's OR of ANDs.
template <class T>
using accumulator_t = cuda::std::conditional_t<
    cuda::std::is_same_v<T, __half>, float,
    cuda::std::conditional_t<cuda::std::is_integral_v<T> && !cuda::std::is_same_v<T, bool>,
                             cuda::std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>, T>>;

template <class Acc> __device__ __forceinline__ Acc multiply_add(Acc w, Acc x, Acc acc)
{
    if constexpr (cuda::std::is_same_v<Acc, bool>) return acc | (w & x);
    else return acc + w * x;  // contracted to a fused multiply-add for floats
}

template <class Acc> struct ParamMask {
    using index_type = int;
    static constexpr bool in_parameters = true;
    static constexpr int capacity = MaskTuning::param_bytes / sizeof(Acc);
    Acc taps[capacity];
    __device__ __forceinline__ Acc operator[](int i) const { return taps[i]; }
};

template <class Acc> struct GlobalMask {
    using index_type = int64_t;
    static constexpr bool in_parameters = false;
    const Acc *taps;
    __device__ __forceinline__ Acc operator[](int64_t i) const { return taps[i]; }
};

template <class T> struct CorrelateArgs {
    const T *in;
    T *out;
    T fill;
    gp_boundary boundary;
    int64_t rows, cols, mask_rows, mask_cols, out_rows, out_cols, row_offset, col_offset;
};

// Stages image rows [row0, row0 + nrows) x columns [col0, col0 + ncols), read with the boundary
// rule (either range may reach past the image), into dst: element (r, c) at dst[r*stride + lead + c].
// Returns lead, the offset that puts the source rows' 16-byte boundaries on dst's.  Rows go to
// threadIdx.y, columns to threadIdx.x, and every copy from inside the image is asynchronous
// (cp.async), waited for by the caller with __pipeline_wait_prior.  When all source rows share one
// alignment, rows move as aligned 16-byte vectors (a few extra elements either side, never read),
// and only the vectors that reach past the image go element by element; otherwise each element is
// copied on its own.  dst must be 16-byte aligned and stride a multiple of the vector size.  Every
// thread of the block calls it with the same arguments.
template <class T>
__device__ int stage_tile(const CorrelateArgs<T> &a, int64_t row0, int nrows, int64_t col0, int ncols,
                          int stride, T *dst)
{
    using Vec = Vec16<T>;
    const auto element = [&](int64_t source_row, int64_t col) {  // the boundary rule, one element
        const int64_t source_col = gp_boundary_index(col, a.cols, a.boundary);
        return source_row < 0 || source_col < 0 ? a.fill : a.in[source_row * a.cols + source_col];
    };
    const bool same_alignment = nrows == 1 || a.cols * sizeof(T) % 16 == 0;
    const int64_t first_row = nrows == 1 ? gp_boundary_index(row0, a.rows, a.boundary) : 0;
    const uintptr_t first_element =
        reinterpret_cast<uintptr_t>(a.in + (first_row < 0 ? 0 : first_row) * a.cols) / sizeof(T) + col0;
    const int lead = same_alignment ? static_cast<int>(first_element % Vec::size) : 0;
    const int64_t first = col0 - lead;  // first column of the aligned source range
    const int vectors = static_cast<int>(ceil_div(lead + ncols, Vec::size));  // per row

    for (int r = threadIdx.y; r < nrows; r += blockDim.y) {
        const int64_t source = gp_boundary_index(row0 + r, a.rows, a.boundary);
        const T *from = a.in + (source < 0 ? 0 : source) * a.cols;
        T *to = dst + r * stride;
        if (same_alignment) {
            for (int v = threadIdx.x; v < vectors; v += blockDim.x) {
                const int64_t col = first + static_cast<int64_t>(v) * Vec::size;
                if (source >= 0 && col >= 0 && col + Vec::size <= a.cols) {
                    __pipeline_memcpy_async(to + v * Vec::size, from + col, sizeof(Vec));
                } else {
                    for (int j = 0; j < Vec::size; ++j) to[v * Vec::size + j] = element(source, col + j);
                }
            }
            continue;
        }
        for (int c = threadIdx.x; c < ncols; c += blockDim.x) {
            const int64_t col = col0 + c;
            if constexpr (sizeof(T) >= 4) {  // cp.async moves 4, 8 or 16 bytes
                if (source >= 0 && col >= 0 && col < a.cols) {
                    __pipeline_memcpy_async(to + c, from + col, sizeof(T));
                    continue;
                }
            }
            to[c] = element(source, col);
        }
    }
    return lead;
}

// acc[s][k] += sum over j < count of mask[first_tap + j*tap_stride] * x[s*StripStride + (k + j)*XStride]
// for k < Items, s < Strips: Items outputs along one axis of a staged buffer, in Strips parallel
// strips that share each mask load.  Taps go in groups of tap_group whose inputs (Items + tap_group
// - 1 per strip) are read from shared memory once, into registers; the last group may read up to
// tap_group - 1 elements past the staged ones (the buffers' slack), which no tap uses.
template <int Items, int Strips, int XStride, int StripStride, class T, class Acc, class Mask>
__device__ __forceinline__ void accumulate_window(const T *x, int count, const Mask &mask,
                                                  typename Mask::index_type first_tap,
                                                  typename Mask::index_type tap_stride,
                                                  Acc (&acc)[Strips][Items])
{
    constexpr int group = CorrelateTuning::tap_group;
    for (int j0 = 0; j0 < count; j0 += group) {
        Acc window[Strips][Items + group - 1];
#pragma unroll
        for (int s = 0; s < Strips; ++s)
#pragma unroll
            for (int i = 0; i < Items + group - 1; ++i)
                window[s][i] = convert<Acc>(x[s * StripStride + (j0 + i) * XStride]);
#pragma unroll
        for (int g = 0; g < group; ++g) {
            if (j0 + g < count) {
                const Acc w = mask[first_tap + (j0 + g) * tap_stride];
#pragma unroll
                for (int s = 0; s < Strips; ++s)
#pragma unroll
                    for (int k = 0; k < Items; ++k) acc[s][k] = multiply_add(w, window[s][g + k], acc[s][k]);
            }
        }
    }
}

// Writes src[0, count) to global dst with the whole block: aligned 16-byte vectors where dst allows,
// then the remaining elements (coalesced either way).
template <class T> __device__ void store_segment(T *dst, int count, const T *src)
{
    using Vec = Vec16<T>;
    const int vectors = reinterpret_cast<uintptr_t>(dst) % 16 == 0 ? count / Vec::size : 0;
    for (int v = threadIdx.x; v < vectors; v += blockDim.x)
        reinterpret_cast<Vec *>(dst)[v] = reinterpret_cast<const Vec *>(src)[v];
    for (int i = vectors * Vec::size + threadIdx.x; i < count; i += blockDim.x) dst[i] = src[i];
}

template <class Acc, int Strips, int Items> __device__ __forceinline__ void clear(Acc (&acc)[Strips][Items])
{
#pragma unroll
    for (int s = 0; s < Strips; ++s)
#pragma unroll
        for (int k = 0; k < Items; ++k) acc[s][k] = Acc(0);
}

// Both kernels are persistent: a block walks the tiles b, b + gridDim.x, ... and, within each tile,
// the chunks of mask taps, one stage at a time.  The next stage's input is copied into the second
// of two shared-memory buffers while the current one is computed, so loads stay in flight through
// the arithmetic and the output stores.
//
// A persistent block's position in a grid of tiles (row-major), advanced by a fixed step without a
// 64-bit division per step.
struct TileWalk {
    int64_t row, col, col_tiles, row_step, col_step;
    __device__ TileWalk(int64_t first, int64_t step, int64_t col_tiles_)
        : row(first / col_tiles_), col(first % col_tiles_), col_tiles(col_tiles_),
          row_step(step / col_tiles_), col_step(step % col_tiles_)
    {
    }
    __device__ void advance()
    {
        row += row_step, col += col_step;
        if (col >= col_tiles) col -= col_tiles, ++row;
    }
};

// Row kernel shared memory: the output tile, then two input buffers of `buffer` elements.
template <class T>
__host__ __device__ constexpr int64_t row_buffer_elements(int64_t chunk_taps)
{
    return round_up(Vec16<T>::size - 1 + RowTuning::tile + chunk_taps - 1 + CorrelateTuning::tap_group,
                    Vec16<T>::size);
}

template <class T, class Mask>
__global__ void __launch_bounds__(RowTuning::threads)
    correlate_rows_kernel(const __grid_constant__ CorrelateArgs<T> a, const __grid_constant__ Mask mask,
                          int buffer)
{
    using Acc = accumulator_t<T>;
    using Index = typename Mask::index_type;
    constexpr int items = RowTuning::items, tile = RowTuning::tile;
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    T *const outputs = reinterpret_cast<T *>(shared_bytes);
    T *const inputs = outputs + tile;
    const auto taps_from = [&](int64_t first_tap) {
        return static_cast<int>(a.mask_cols - first_tap < tile ? a.mask_cols - first_tap : tile);
    };
    const auto load = [&](const TileWalk &at, int64_t first_tap, T *dst) {
        return stage_tile(a, at.row + a.row_offset, 1, at.col * tile + a.col_offset + first_tap,
                          tile + taps_from(first_tap) - 1, 0, dst);
    };

    // The stage in buffer b is (current, first_tap); the one being copied is (next, next_tap).
    TileWalk current(blockIdx.x, gridDim.x, ceil_div(a.out_cols, tile)), next = current;
    int64_t first_tap = 0;  // of the current chunk of taps
    int lead = load(current, first_tap, inputs);
    __pipeline_commit();
    Acc acc[1][items];
    clear(acc);
    for (int b = 0;; b ^= 1) {
        __pipeline_wait_prior(0);
        __syncthreads();  // the current stage is in buffer b, and buffer b ^ 1 is free
        int64_t next_tap = first_tap + tile;
        if (next_tap >= a.mask_cols) next.advance(), next_tap = 0;
        const bool more = next.row < a.out_rows;
        const int next_lead = more ? load(next, next_tap, inputs + (b ^ 1) * buffer) : 0;
        __pipeline_commit();
        accumulate_window<items, 1, 1, 0>(inputs + b * buffer + lead + threadIdx.x * items, taps_from(first_tap),
                                          mask, static_cast<Index>(first_tap), Index(1), acc);
        if (next_tap == 0) {  // the current tile is complete
#pragma unroll
            for (int k = 0; k < items; ++k) outputs[threadIdx.x * items + k] = convert<T>(acc[0][k]);
            clear(acc);
            __syncthreads();
            const int64_t first = current.col * tile;
            store_segment(a.out + current.row * a.out_cols + first,
                          static_cast<int>(a.out_cols - first < tile ? a.out_cols - first : tile), outputs);
        }
        if (!more) break;
        current = next, first_tap = next_tap, lead = next_lead;
    }
}

// The mask extents a tile kernel is compiled for.  FixedShape: the common small masks, whose taps
// unroll completely, so that each multiply-add reads its tap straight from the parameter bank and
// each staged input is read once per input row, not once per tap row.  RuntimeShape: any other
// mask, in chunks of up to max_chunk x max_chunk taps.
template <int Rows, int Cols> struct FixedShape {
    static constexpr bool fixed = true;
    static constexpr int chunk_rows = Rows, chunk_cols = Cols;
    static constexpr int slack_rows = 0;
};
struct RuntimeShape {
    static constexpr bool fixed = false;
    static constexpr int chunk_rows = TileTuning::max_chunk, chunk_cols = TileTuning::max_chunk;
    static constexpr int slack_rows = CorrelateTuning::tap_group;  // the last window reads past
};

// Row stride of a staged tile: the widest chunk's columns plus alignment slack.  A compile-time
// constant, so that the loads down a column use immediate offsets.
template <class Shape, class T>
constexpr int tile_stride = static_cast<int>(
    round_up(TileTuning::tile_cols + Shape::chunk_cols - 1 + 2 * (Vec16<T>::size - 1), Vec16<T>::size));

// Tile kernel shared memory: two staged tiles of `buffer` elements.
template <class Shape, class T>
__host__ __device__ constexpr int64_t tile_buffer_elements(int64_t chunk_rows)
{
    return (TileTuning::tile_rows + chunk_rows - 1 + Shape::slack_rows) * tile_stride<Shape, T>;
}

// Stages Rows x Vectors aligned 16-byte vectors from src (rows `cols` elements apart, every one
// inside the image) into dst (rows Stride elements apart) with cp.async: the interior tiles of a
// FixedShape kernel, whose extents are compile-time, so that each copy costs a few instructions.
template <int Rows, int Vectors, int Stride, class T>
__device__ __forceinline__ void stage_interior(const T *src, int64_t cols, T *dst)
{
    using Vec = Vec16<T>;
    constexpr int threads = TileTuning::threads_x * TileTuning::threads_y;
    const int thread = threadIdx.y * TileTuning::threads_x + threadIdx.x;
#pragma unroll
    for (int first = 0; first < Rows * Vectors; first += threads) {
        const int i = first + thread;
        if (first + threads <= Rows * Vectors || i < Rows * Vectors) {
            const int r = i / Vectors, v = i - r * Vectors;
            __pipeline_memcpy_async(dst + r * Stride + v * Vec::size, src + r * cols + v * Vec::size, sizeof(Vec));
        }
    }
}

// acc[s][k] += sum over p < Rows, q < Cols of mask[p*Cols + q] * x[(k + p)*Stride + s*threads_x + q]:
// a thread's strips of items_y outputs down a column, for a mask known at compile time.  Each
// input row's Cols values per strip are read once and used by every output row they reach.
template <int Rows, int Cols, int Stride, class T, class Acc, class Mask>
__device__ __forceinline__ void accumulate_fixed(const T *x, const Mask &mask,
                                                 Acc (&acc)[TileTuning::strips][TileTuning::items_y])
{
    using Tuning = TileTuning;
#pragma unroll
    for (int r = 0; r < Tuning::items_y + Rows - 1; ++r) {
        Acc in[Tuning::strips][Cols];
#pragma unroll
        for (int s = 0; s < Tuning::strips; ++s)
#pragma unroll
            for (int q = 0; q < Cols; ++q) in[s][q] = convert<Acc>(x[r * Stride + s * Tuning::threads_x + q]);
#pragma unroll
        for (int k = 0; k < Tuning::items_y; ++k) {
            const int p = r - k;
            if (p < 0 || p >= Rows) continue;
#pragma unroll
            for (int q = 0; q < Cols; ++q)
#pragma unroll
                for (int s = 0; s < Tuning::strips; ++s)
                    acc[s][k] = multiply_add(mask[p * Cols + q], in[s][q], acc[s][k]);
        }
    }
}

template <class T, class Mask, class Shape>
__global__ void __launch_bounds__(TileTuning::threads_x *TileTuning::threads_y,
                                  TileTuning::min_blocks<T, Shape::chunk_cols>)
    correlate_tiles_kernel(const __grid_constant__ CorrelateArgs<T> a, const __grid_constant__ Mask mask,
                           int buffer)
{
    using Acc = accumulator_t<T>;
    using Index = typename Mask::index_type;
    using Tuning = TileTuning;
    constexpr int stride = tile_stride<Shape, T>;
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    T *const inputs = reinterpret_cast<T *>(shared_bytes);
    // A stage is a tile (rows [at.row * tile_rows, ...) x columns [at.col * tile_cols, ...)) and a
    // chunk of mask rows [p0, p0 + rows) x columns [q0, q0 + cols).
    struct Stage {
        TileWalk at;
        int64_t p0, q0;
        int rows, cols;
        __device__ void fit(const CorrelateArgs<T> &a)
        {
            rows = static_cast<int>(a.mask_rows - p0 < Shape::chunk_rows ? a.mask_rows - p0 : Shape::chunk_rows);
            cols = static_cast<int>(a.mask_cols - q0 < Shape::chunk_cols ? a.mask_cols - q0 : Shape::chunk_cols);
        }
        __device__ void advance(const CorrelateArgs<T> &a)  // to the next chunk, or the next tile
        {
            q0 += Shape::chunk_cols;
            if (q0 >= a.mask_cols) q0 = 0, p0 += Shape::chunk_rows;
            if (p0 >= a.mask_rows) p0 = 0, at.advance();
            fit(a);
        }
    };
    const auto load = [&](const Stage &s, T *dst) {
        const int64_t row0 = s.at.row * Tuning::tile_rows + a.row_offset + s.p0;
        const int64_t col0 = s.at.col * Tuning::tile_cols + a.col_offset + s.q0;
        if constexpr (Shape::fixed) {
            using Vec = Vec16<T>;
            constexpr int rows = Tuning::tile_rows + Shape::chunk_rows - 1;
            constexpr int vectors = (Vec::size - 1 + Tuning::tile_cols + Shape::chunk_cols - 1 + Vec::size - 1) / Vec::size;
            const int lead = static_cast<int>((reinterpret_cast<uintptr_t>(a.in) / sizeof(T) + col0) % Vec::size);
            if (a.cols % Vec::size == 0 && row0 >= 0 && row0 + rows <= a.rows && col0 - lead >= 0 &&
                col0 - lead + vectors * Vec::size <= a.cols) {
                stage_interior<rows, vectors, stride>(a.in + row0 * a.cols + col0 - lead, a.cols, dst);
                return lead;
            }
        }
        return stage_tile(a, row0, Tuning::tile_rows + s.rows - 1, col0, Tuning::tile_cols + s.cols - 1, stride, dst);
    };

    const int64_t row_tiles = ceil_div(a.out_rows, Tuning::tile_rows);
    Stage stage{TileWalk(blockIdx.x, gridDim.x, ceil_div(a.out_cols, Tuning::tile_cols)), 0, 0, 0, 0};
    stage.fit(a);
    int lead = load(stage, inputs);
    __pipeline_commit();
    Acc acc[Tuning::strips][Tuning::items_y];
    clear(acc);
    for (int b = 0;; b ^= 1) {
        __pipeline_wait_prior(0);
        __syncthreads();  // the current stage is in buffer b, and buffer b ^ 1 is free
        Stage next = stage;
        next.advance(a);
        const bool more = next.at.row < row_tiles;
        const int next_lead = more ? load(next, inputs + (b ^ 1) * buffer) : 0;
        __pipeline_commit();
        const T *x = inputs + b * buffer + threadIdx.y * Tuning::items_y * stride + lead + threadIdx.x;
        if constexpr (Shape::fixed) {
            accumulate_fixed<Shape::chunk_rows, Shape::chunk_cols, stride>(x, mask, acc);
        } else {
            for (int q = 0; q < stage.cols; ++q)
                accumulate_window<Tuning::items_y, Tuning::strips, stride, Tuning::threads_x>(
                    x + q, stage.rows, mask, static_cast<Index>(stage.p0 * a.mask_cols + stage.q0 + q),
                    static_cast<Index>(a.mask_cols), acc);
        }
        if (next.p0 == 0 && next.q0 == 0) {  // the current tile is complete: coalesced stores across the lanes
            const int64_t row = stage.at.row * Tuning::tile_rows + threadIdx.y * Tuning::items_y;
            const int64_t col = stage.at.col * Tuning::tile_cols + threadIdx.x;
            T *out = a.out + row * a.out_cols + col;
            const bool inside = (stage.at.row + 1) * Tuning::tile_rows <= a.out_rows &&
                                (stage.at.col + 1) * Tuning::tile_cols <= a.out_cols;
#pragma unroll
            for (int k = 0; k < Tuning::items_y; ++k, out += a.out_cols)
#pragma unroll
                for (int s = 0; s < Tuning::strips; ++s)
                    if (inside || (row + k < a.out_rows && col + s * Tuning::threads_x < a.out_cols))
                        out[s * Tuning::threads_x] = convert<T>(acc[s][k]);
            clear(acc);
        }
        if (!more) break;
        stage = next, lead = next_lead;
    }
}

template <class T, class Mask>
int launch_rows(int device, const CorrelateArgs<T> &args, const Mask &mask, gp_error *err)
{
    const int64_t buffer =
        row_buffer_elements<T>(args.mask_cols < RowTuning::tile ? args.mask_cols : RowTuning::tile);
    const size_t shared = (RowTuning::tile + 2 * buffer) * sizeof(T);
    const auto kernel = correlate_rows_kernel<T, Mask>;
    unsigned blocks = 0;
    if (launch_persistent(device, kernel, dim3(RowTuning::threads), shared,
                          ceil_div(args.out_cols, RowTuning::tile) * args.out_rows, err, blocks))
        return -1;
    kernel<<<blocks, RowTuning::threads, shared, work_stream()>>>(args, mask, static_cast<int>(buffer));
    GP_CHECK_LAUNCH(err, "correlate_rows_kernel");
    return 0;
}

template <class Shape, class T, class Mask>
int launch_tiles(int device, const CorrelateArgs<T> &args, const Mask &mask, gp_error *err)
{
    using Tuning = TileTuning;
    const int64_t buffer = tile_buffer_elements<Shape, T>(
        args.mask_rows < Shape::chunk_rows ? args.mask_rows : Shape::chunk_rows);
    const size_t shared = 2 * buffer * sizeof(T);
    const dim3 threads(Tuning::threads_x, Tuning::threads_y);
    const auto kernel = correlate_tiles_kernel<T, Mask, Shape>;
    unsigned blocks = 0;
    if (launch_persistent(device, kernel, threads, shared,
                          ceil_div(args.out_cols, Tuning::tile_cols) * ceil_div(args.out_rows, Tuning::tile_rows),
                          err, blocks))
        return -1;
    kernel<<<blocks, threads, shared, work_stream()>>>(args, mask, static_cast<int>(buffer));
    GP_CHECK_LAUNCH(err, "correlate_tiles_kernel");
    return 0;
}

template <class T, class Mask>
int launch(int device, const CorrelateArgs<T> &args, const Mask &mask, gp_error *err)
{
    if (args.mask_rows == 1) return launch_rows(device, args, mask, err);
    if constexpr (Mask::in_parameters) {
        if (args.mask_rows == args.mask_cols) switch (args.mask_rows) {  // the common odd square masks, fully unrolled
        case 3: return launch_tiles<FixedShape<3, 3>>(device, args, mask, err);
        case 5: return launch_tiles<FixedShape<5, 5>>(device, args, mask, err);
        case 7: return launch_tiles<FixedShape<7, 7>>(device, args, mask, err);
        default: break;
        }
    }
    return launch_tiles<RuntimeShape>(device, args, mask, err);
}

// Converts the host mask to the accumulator type and launches with it as a kernel parameter, or
// from a per-call device copy when it does not fit.
template <class T>
int correlate_typed(int device, const gp_correlate_args &call, const void *in, void *out, gp_error *err)
{
    using Acc = accumulator_t<T>;
    const CorrelateArgs<T> args{static_cast<const T *>(in), static_cast<T *>(out),
                                *static_cast<const T *>(call.fill), call.boundary,
                                call.rows, call.cols, call.mask_rows, call.mask_cols,
                                call.out_rows, call.out_cols, call.row_offset, call.col_offset};
    const T *host_mask = static_cast<const T *>(call.mask);
    const int64_t taps = call.mask_rows * call.mask_cols;
    if (taps <= ParamMask<Acc>::capacity) {
        ParamMask<Acc> mask{};
        for (int64_t i = 0; i < taps; ++i) mask.taps[i] = convert<Acc>(host_mask[i]);
        return launch(device, args, mask, err);
    }
    std::unique_ptr<Acc[]> converted(new (std::nothrow) Acc[taps]);
    if (!converted) return fail(err, GP_ERR_NOMEM, "out of host memory converting the mask");
    for (int64_t i = 0; i < taps; ++i) converted[i] = convert<Acc>(host_mask[i]);
    DeviceBuffer device_mask;
    if (device_mask.allocate(sizeof(Acc) * taps, err)) return -1;
    // From pageable memory this returns once the source has been staged, so `converted` may go.
    GP_CUDA_TRY(cudaMemcpyAsync(device_mask.as<void>(), converted.get(), sizeof(Acc) * taps,
                                cudaMemcpyHostToDevice, work_stream()),
                err, "copy the mask to the device");
    return launch(device, args, GlobalMask<Acc>{device_mask.as<const Acc>()}, err);
}

}  // namespace

int launch_correlate(int device, const gp_correlate_args &args, const void *in, void *out, gp_error *err)
{
    return dispatch_dtype(args.dtype, err, [&](auto tag) {
        return correlate_typed<typename decltype(tag)::type>(device, args, in, out, err);
    });
}

int correlate_resident(int device, const gp_call &call, gp_error *err)
{
    return launch_correlate(device, call.correlate, call.in, call.out, err);
}

}  // namespace gp
