// Correlation of an image with a mask: the one primitive behind numpy.convolve/correlate and
// scipy.signal.convolve2d/correlate2d (convolution is correlation with the mask reversed, and a
// 1-D signal is an image of one row).  See gp_correlate_desc.
//   mask_rows == 1: correlate_rows_kernel.  A block computes RowTuning::tile consecutive outputs
//                   of one row, RowTuning::items per thread, from a shared-memory copy of the
//                   input segment they need (the tile plus a halo of mask_cols - 1).
//   mask_rows > 1:  correlate_tiles_kernel.  A block computes a 2-D tile of outputs, each thread a
//                   few column strips of TileTuning::items_y outputs, from a shared-memory copy of
//                   its input tile with halos on both axes.
// Both stage their input with stage_tile, which resolves the boundary mode in the index mapping:
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
#include <memory>
#include <new>

#include "common.cuh"
#include "gpuprims_cuda.h"

namespace gp {

struct MaskTuning {
    static constexpr int param_bytes = 1024;  // masks up to this size are kernel parameters
};

// Shared by both kernels.
struct CorrelateTuning {
    static constexpr int tap_group = 8;   // taps per register window (items + tap_group - 1 inputs)
    static constexpr int load_batch = 4;  // 16-byte loads in flight per thread while staging
};

struct RowTuning {
    static constexpr int threads = 256;
    // Consecutive outputs per thread.  Odd, so that the lanes' shared-memory reads (9 elements
    // apart) fall in distinct banks.
    static constexpr int items = 9;
    static constexpr int tile = threads * items;  // outputs per block, and taps per chunk
};

struct TileTuning {
    static constexpr int threads_x = 32, threads_y = 8;
    static constexpr int items_y = 8;  // outputs per thread down a column (a window over mask rows)
    static constexpr int strips = 2;   // columns per thread, threads_x apart (conflict-free reads)
    static constexpr int tile_rows = threads_y * items_y, tile_cols = threads_x * strips;
    static constexpr int max_chunk = 32;  // mask rows and columns staged at once
};

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
    static constexpr int64_t capacity = MaskTuning::param_bytes / sizeof(Acc);
    Acc taps[capacity];
    __device__ __forceinline__ Acc operator[](int64_t i) const { return taps[i]; }
};

template <class Acc> struct GlobalMask {
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

// Copies image rows [row0, row0 + nrows) x columns [col0, col0 + ncols), read with the boundary
// rule (either range may reach past the image), into dst: element (r, c) at dst[r*stride + lead + c].
// Returns lead, the offset that puts the source rows' 16-byte boundaries on dst's.  When the
// columns lie inside the image and all source rows share one alignment, whole rows move as aligned
// vectors (a few extra elements either side, never read), load_batch in flight per thread; else
// element by element.  dst must be 16-byte aligned and stride a multiple of the vector size.
// Every thread of the block calls it with the same arguments.
template <class T>
__device__ int stage_tile(const CorrelateArgs<T> &a, int64_t row0, int nrows, int64_t col0, int ncols,
                          int stride, T *dst)
{
    using Vec = Vec16<T>;
    constexpr int batch = CorrelateTuning::load_batch;
    const int thread = threadIdx.y * blockDim.x + threadIdx.x, threads = blockDim.x * blockDim.y;
    const bool same_alignment = nrows == 1 || a.cols * sizeof(T) % 16 == 0;
    const int64_t first_row = nrows == 1 ? gp_boundary_index(row0, a.rows, a.boundary) : 0;
    const uintptr_t first_element =
        reinterpret_cast<uintptr_t>(a.in + (first_row < 0 ? 0 : first_row) * a.cols) / sizeof(T) + col0;
    const int lead = same_alignment ? static_cast<int>(first_element % Vec::size) : 0;
    const int64_t first = col0 - lead;  // first column of the aligned source range
    const int vectors = static_cast<int>(ceil_div(lead + ncols, Vec::size));  // per row

    if (same_alignment && first >= 0 && first + static_cast<int64_t>(vectors) * Vec::size <= a.cols) {
        Vec fill;
        for (int j = 0; j < Vec::size; ++j) fill.v[j] = a.fill;
        const int total = nrows * vectors;
        for (int base = thread; base < total; base += batch * threads) {
            Vec loaded[batch];
#pragma unroll
            for (int b = 0; b < batch; ++b) {
                const int index = base + b * threads;
                if (index < total) {
                    const int r = index / vectors;
                    const int64_t source = gp_boundary_index(row0 + r, a.rows, a.boundary);
                    loaded[b] = source < 0 ? fill
                                           : load_readonly(reinterpret_cast<const Vec *>(
                                                 a.in + source * a.cols + first) + (index - r * vectors));
                }
            }
#pragma unroll
            for (int b = 0; b < batch; ++b) {
                const int index = base + b * threads;
                if (index < total) {
                    const int r = index / vectors;
                    reinterpret_cast<Vec *>(dst + r * stride)[index - r * vectors] = loaded[b];
                }
            }
        }
    } else {
        const int total = nrows * ncols;
#pragma unroll 4
        for (int index = thread; index < total; index += threads) {
            const int r = index / ncols, c = index - r * ncols;
            const int64_t source_row = gp_boundary_index(row0 + r, a.rows, a.boundary);
            const int64_t source_col = gp_boundary_index(col0 + c, a.cols, a.boundary);
            dst[r * stride + lead + c] =
                source_row < 0 || source_col < 0 ? a.fill : a.in[source_row * a.cols + source_col];
        }
    }
    return lead;
}

// acc[k] += sum over j < count of mask[first_tap + j*tap_stride] * x[(k + j) * x_stride], k < Items:
// Items outputs along one axis of the staged input.  Taps go in groups of tap_group whose inputs
// (Items + tap_group - 1 of them) are read from shared memory once, into registers.
template <int Items, class T, class Acc, class Mask>
__device__ __forceinline__ void accumulate_window(const T *x, int x_stride, int count, const Mask &mask,
                                                  int64_t first_tap, int64_t tap_stride, Acc (&acc)[Items])
{
    constexpr int group = CorrelateTuning::tap_group;
    for (int j0 = 0; j0 < count; j0 += group) {
        Acc window[Items + group - 1];
#pragma unroll
        for (int i = 0; i < Items + group - 1; ++i)
            window[i] = j0 + i < count + Items - 1 ? convert<Acc>(x[(j0 + i) * x_stride]) : Acc(0);
#pragma unroll
        for (int g = 0; g < group; ++g) {
            if (j0 + g < count) {
                const Acc w = mask[first_tap + (j0 + g) * tap_stride];
#pragma unroll
                for (int k = 0; k < Items; ++k) acc[k] = multiply_add(w, window[g + k], acc[k]);
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

template <class T, class Mask>
__global__ void __launch_bounds__(RowTuning::threads)
    correlate_rows_kernel(const __grid_constant__ CorrelateArgs<T> a, const __grid_constant__ Mask mask)
{
    using Acc = accumulator_t<T>;
    constexpr int items = RowTuning::items, tile = RowTuning::tile;
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    T *segment = reinterpret_cast<T *>(shared_bytes);
    const int64_t first_out = static_cast<int64_t>(blockIdx.x) * tile;
    for (int64_t row = blockIdx.y; row < a.out_rows; row += gridDim.y) {
        Acc acc[items];
#pragma unroll
        for (int k = 0; k < items; ++k) acc[k] = Acc(0);
        for (int64_t chunk = 0; chunk < a.mask_cols; chunk += tile) {
            const int taps = static_cast<int>(a.mask_cols - chunk < tile ? a.mask_cols - chunk : tile);
            __syncthreads();  // the segment's previous readers are done
            const int lead = stage_tile(a, row + a.row_offset, 1, first_out + a.col_offset + chunk,
                                        tile + taps - 1, 0, segment);
            __syncthreads();
            accumulate_window<items>(segment + lead + threadIdx.x * items, 1, taps, mask, chunk, 1, acc);
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < items; ++k) segment[threadIdx.x * items + k] = convert<T>(acc[k]);
        __syncthreads();
        const int64_t valid = a.out_cols - first_out;
        store_segment(a.out + row * a.out_cols + first_out, static_cast<int>(valid < tile ? valid : tile),
                      segment);
    }
}

template <class T, class Mask>
__global__ void __launch_bounds__(TileTuning::threads_x *TileTuning::threads_y)
    correlate_tiles_kernel(const __grid_constant__ CorrelateArgs<T> a, const __grid_constant__ Mask mask,
                           int stride)
{
    using Acc = accumulator_t<T>;
    using Tuning = TileTuning;
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    T *tile = reinterpret_cast<T *>(shared_bytes);
    const int64_t col0 = static_cast<int64_t>(blockIdx.x) * Tuning::tile_cols;
    for (int64_t row0 = static_cast<int64_t>(blockIdx.y) * Tuning::tile_rows; row0 < a.out_rows;
         row0 += static_cast<int64_t>(gridDim.y) * Tuning::tile_rows) {
        Acc acc[Tuning::strips][Tuning::items_y];
#pragma unroll
        for (int s = 0; s < Tuning::strips; ++s)
#pragma unroll
            for (int k = 0; k < Tuning::items_y; ++k) acc[s][k] = Acc(0);
        for (int64_t p0 = 0; p0 < a.mask_rows; p0 += Tuning::max_chunk) {
            const int rows = static_cast<int>(a.mask_rows - p0 < Tuning::max_chunk ? a.mask_rows - p0
                                                                                   : Tuning::max_chunk);
            for (int64_t q0 = 0; q0 < a.mask_cols; q0 += Tuning::max_chunk) {
                const int cols = static_cast<int>(
                    a.mask_cols - q0 < Tuning::max_chunk ? a.mask_cols - q0 : Tuning::max_chunk);
                __syncthreads();  // the tile's previous readers are done
                const int lead = stage_tile(a, row0 + a.row_offset + p0, Tuning::tile_rows + rows - 1,
                                            col0 + a.col_offset + q0, Tuning::tile_cols + cols - 1, stride, tile);
                __syncthreads();
                const T *x = tile + threadIdx.y * Tuning::items_y * stride + lead + threadIdx.x;
                for (int q = 0; q < cols; ++q) {
#pragma unroll
                    for (int s = 0; s < Tuning::strips; ++s)
                        accumulate_window<Tuning::items_y>(x + s * Tuning::threads_x + q, stride, rows, mask,
                                                           p0 * a.mask_cols + q0 + q, a.mask_cols, acc[s]);
                }
            }
        }
#pragma unroll
        for (int s = 0; s < Tuning::strips; ++s) {
            const int64_t col = col0 + s * Tuning::threads_x + threadIdx.x;
#pragma unroll
            for (int k = 0; k < Tuning::items_y; ++k) {
                const int64_t row = row0 + threadIdx.y * Tuning::items_y + k;
                if (row < a.out_rows && col < a.out_cols) a.out[row * a.out_cols + col] = convert<T>(acc[s][k]);
            }
        }
    }
}

__host__ __device__ constexpr int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

template <class T, class Mask> static int launch(const CorrelateArgs<T> &args, const Mask &mask, gp_error *err)
{
    constexpr int vector = Vec16<T>::size;
    constexpr int64_t max_grid_rows = 65535;
    const cudaStream_t stream = work_stream();
    if (args.mask_rows == 1) {
        const int64_t taps = args.mask_cols < RowTuning::tile ? args.mask_cols : RowTuning::tile;
        const size_t shared = round_up(vector - 1 + RowTuning::tile + taps - 1, vector) * sizeof(T);
        const dim3 grid(static_cast<unsigned>(ceil_div(args.out_cols, RowTuning::tile)),
                        static_cast<unsigned>(args.out_rows < max_grid_rows ? args.out_rows : max_grid_rows));
        correlate_rows_kernel<T, Mask><<<grid, RowTuning::threads, shared, stream>>>(args, mask);
        GP_CHECK_LAUNCH(err, "correlate_rows_kernel");
        return 0;
    }
    using Tuning = TileTuning;
    const int64_t rows = args.mask_rows < Tuning::max_chunk ? args.mask_rows : Tuning::max_chunk;
    const int64_t cols = args.mask_cols < Tuning::max_chunk ? args.mask_cols : Tuning::max_chunk;
    const int stride = static_cast<int>(round_up(vector - 1 + Tuning::tile_cols + cols - 1, vector));
    const size_t shared = (Tuning::tile_rows + rows - 1) * stride * sizeof(T);
    const auto kernel = correlate_tiles_kernel<T, Mask>;
    if (shared > 48 * 1024)  // above the default dynamic shared-memory limit: opt in
        GP_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(shared)),
                    err, "cudaFuncSetAttribute");
    const int64_t row_tiles = ceil_div(args.out_rows, Tuning::tile_rows);
    const dim3 grid(static_cast<unsigned>(ceil_div(args.out_cols, Tuning::tile_cols)),
                    static_cast<unsigned>(row_tiles < max_grid_rows ? row_tiles : max_grid_rows));
    kernel<<<grid, dim3(Tuning::threads_x, Tuning::threads_y), shared, stream>>>(args, mask, stride);
    GP_CHECK_LAUNCH(err, "correlate_tiles_kernel");
    return 0;
}

// Converts the host mask to the accumulator type and launches with it as a kernel parameter, or
// from a per-call device copy when it does not fit.
template <class T> static int correlate_typed(const gp_correlate_desc &desc, gp_error *err)
{
    using Acc = accumulator_t<T>;
    const CorrelateArgs<T> args{static_cast<const T *>(desc.in), static_cast<T *>(desc.out),
                                *static_cast<const T *>(desc.fill), desc.boundary,
                                desc.rows, desc.cols, desc.mask_rows, desc.mask_cols,
                                desc.out_rows, desc.out_cols, desc.row_offset, desc.col_offset};
    const T *host_mask = static_cast<const T *>(desc.mask);
    const int64_t taps = desc.mask_rows * desc.mask_cols;
    if (taps <= ParamMask<Acc>::capacity) {
        ParamMask<Acc> mask{};
        for (int64_t i = 0; i < taps; ++i) mask.taps[i] = convert<Acc>(host_mask[i]);
        return launch(args, mask, err);
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
    return launch(args, GlobalMask<Acc>{device_mask.as<const Acc>()}, err);
}

static int check_desc(const gp_correlate_desc *desc, gp_error *err)
{
    if (static_cast<int>(desc->dtype) < 0 || desc->dtype >= GP_NUM_DTYPES ||
        static_cast<int>(desc->boundary) < 0 || desc->boundary >= GP_NUM_BOUNDARIES)
        return fail(err, GP_ERR_INVALID, "unknown dtype or boundary mode");
    if (desc->rows < 1 || desc->cols < 1 || desc->mask_rows < 1 || desc->mask_cols < 1 ||
        desc->out_rows < 1 || desc->out_cols < 1)
        return fail(err, GP_ERR_INVALID, "an empty correlation reached the CUDA backend");
    return 0;
}

}  // namespace gp

extern "C" int gp_cuda_correlate_resident(int device, const gp_correlate_desc *desc, gp_error *err)
{
    using namespace gp;
    if (check_desc(desc, err) || use_device(device, err)) return -1;
    return dispatch_dtype(desc->dtype, err, [&](auto tag) {
        return correlate_typed<typename decltype(tag)::type>(*desc, err);
    });
}

extern "C" int gp_cuda_correlate(int device, const gp_correlate_desc *desc, gp_error *err)
{
    using namespace gp;
    if (check_desc(desc, err) || use_device(device, err)) return -1;
    const size_t element = static_cast<size_t>(gp_dtype_size(desc->dtype));
    return with_device_copies(desc->in, element * desc->rows * desc->cols, desc->out,
                              element * desc->out_rows * desc->out_cols, err,
                              [&](const void *device_in, void *device_out) {
                                  gp_correlate_desc resident = *desc;
                                  resident.in = device_in;
                                  resident.out = device_out;
                                  return gp_cuda_correlate_resident(device, &resident, err);
                              });
}
