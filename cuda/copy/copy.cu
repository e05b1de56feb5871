// Contiguous copies of strided views; transpose(a, axes) is the copy of a's permuted view.
//
// gp_copy_simplify() first reduces the copy to its fewest dimensions.  Then, with q the last
// dimension (contiguous in the output):
//   - the layout is kept (at most one dimension, of stride 1): cudaMemcpyAsync;
//   - q is the best dimension to read along (gp_copy_tile_axis() < 0): copy_rows_kernel, rows
//     copied coalesced on both sides, each row's source offset computed once;
//   - else a tiled transpose between q and p = gp_copy_tile_axis(), the dimension closest to
//     contiguous in the source, batched over the other dimensions:
//       transpose_vector_kernel when p is contiguous and every tile row starts on 16 bytes on both
//         sides: 16-byte loads and stores, a swizzled shared tile, 1- and 2-byte elements packed
//         into 32-bit words and transposed in registers, so that threads move 16-byte words on both
//         sides and shared memory is free of bank conflicts both ways;
//       transpose_elements_kernel otherwise: element by element through a padded shared tile whose
//         shape follows the extents; a side shorter than a warp is held whole, and when that makes
//         the tile's source or destination one contiguous run, that side is copied as a run of
//         16-byte words (7 x 1,000,003 writes its output that way).
//
// The streamed form, which copies blocks of the output from the runs of the source they read, is
// in copy_tiler.cu.
#include "collectives.cuh"
#include "common.cuh"
#include "contract/copy_layout.h"
#include "copy/copy.cuh"
#include "primitives.cuh"

namespace gp {

// The tuning structs have external linkage: nvcc 13.0 warns (#114) about member variable templates
// of types inside an anonymous namespace.  Everything else here is file-private.

struct TransposeTuning {
    static constexpr int threads = 256;  // block size of every copy kernel
    // Register caps: 5 vector blocks (80 KiB of tiles in flight) per SM, 4 for 1-byte elements
    // (their 16-word transposes need more registers); 6 element blocks; fewer where the SM holds
    // fewer threads (Turing: 4).
    template <class T>
    static constexpr int vector_min_blocks = LaunchLimits::min_blocks(threads, sizeof(T) == 1 ? 4 : 5);
    static constexpr int element_min_blocks = LaunchLimits::min_blocks(threads, 6);
    // Vector kernel: a 16 KiB shared tile of rows (along p) of 256 bytes; 128 for 1-byte elements,
    // whose tile needs 8 q-vectors of 16 rows each along q.
    static constexpr int vector_tile_bytes = 16384;
    template <class T> static constexpr int vector_row_bytes = sizeof(T) == 1 ? 128 : 256;
    // Element kernel: square tiles of up to element_edge^2; a side shorter than thin_extent is held
    // whole and the tile grows along the other side to about thin_tile_elements (small tiles: the
    // grid then has enough blocks for several waves).
    static constexpr int element_edge = 64;
    static constexpr int element_capacity = element_edge * (element_edge + 4);  // room for padding
    static constexpr int thin_extent = 32;
    static constexpr int thin_tile_elements = 1024;
    static constexpr int element_batch = 4;  // loads in flight per thread (element and row kernels)
    // Row kernel: elements one block copies; rows shorter than that are grouped whole.
    static constexpr int row_block_elements = 4096;
};

namespace {

// Dimensions walked outside a tile or a row: extents with source and destination strides.
struct OuterDims {
    int ndim = 0;
    int64_t shape[GP_MAX_DIMS];
    int64_t src[GP_MAX_DIMS];
    int64_t dst[GP_MAX_DIMS];

    void add(int64_t extent, int64_t src_stride, int64_t dst_stride)
    {
        shape[ndim] = extent;
        src[ndim] = src_stride;
        dst[ndim] = dst_stride;
        ++ndim;
    }

    __device__ void offsets(int64_t index, int64_t &src_offset, int64_t &dst_offset) const
    {
        src_offset = 0;
        dst_offset = 0;
        for (int d = ndim - 1; d >= 0; --d) {
            const int64_t i = index % shape[d];
            index /= shape[d];
            src_offset += i * src[d];
            dst_offset += i * dst[d];
        }
    }
};

// Walks the block's threads over a row-major (major, minor) space of rows `width` long, a block
// size apart per step, without dividing: the position, and two offsets that are linear in it,
// `far` (64-bit, global memory) and `near` (shared memory, or within a block's output).
struct ThreadWalk {
    int minor, major, width, step_minor, step_major;
    int64_t far, far_step, far_wrap;
    int near, near_step, near_wrap;

    // far = minor * far_minor + major * far_major, likewise near.
    __device__ ThreadWalk(int row_width, int64_t far_minor, int64_t far_major, int near_minor, int near_major)
        : minor(static_cast<int>(threadIdx.x) % row_width), major(static_cast<int>(threadIdx.x) / row_width),
          width(row_width), step_minor(static_cast<int>(blockDim.x) % row_width),
          step_major(static_cast<int>(blockDim.x) / row_width)
    {
        far = minor * far_minor + major * far_major;
        far_step = step_minor * far_minor + step_major * far_major;
        far_wrap = far_major - width * far_minor;
        near = minor * near_minor + major * near_major;
        near_step = step_minor * near_minor + step_major * near_major;
        near_wrap = near_major - width * near_minor;
    }

    __device__ void next()
    {
        minor += step_minor;
        major += step_major;
        far += far_step;
        near += near_step;
        if (minor >= width) {
            minor -= width;
            ++major;
            far += far_wrap;
            near += near_wrap;
        }
    }
};

// Where one tile lies: its source and destination offsets and its valid extents.
struct TileSpot {
    int64_t src, dst;
    int valid_p, valid_q;
};

// A tiled transpose: out[p * dst_p + q] = in[p * src_p + q * src_q] for p < extent_p, q < extent_q,
// at every index of the outer dimensions.
struct TilePlan {
    int64_t extent_p, extent_q;
    int64_t src_p, src_q, dst_p;
    int tile_p, tile_q;  // tile extents
    int smem_p, smem_q;  // element kernel: shared-tile strides of p and q
    // Element kernel: the tile's source (or destination) is one contiguous run, held densely in
    // shared memory, so that it is copied as a run.
    bool flat_load, flat_store;
    int64_t tiles_p, tiles_q, tiles;
    OuterDims outer;

    __device__ TileSpot locate(int64_t tile) const
    {
        const int64_t tp = tile % tiles_p, rest = tile / tiles_p;
        const int64_t tq = rest % tiles_q, outer_index = rest / tiles_q;
        TileSpot spot;
        outer.offsets(outer_index, spot.src, spot.dst);
        const int64_t p0 = tp * tile_p, q0 = tq * tile_q;
        spot.src += p0 * src_p + q0 * src_q;
        spot.dst += p0 * dst_p + q0;
        spot.valid_p = static_cast<int>(extent_p - p0 < tile_p ? extent_p - p0 : tile_p);
        spot.valid_q = static_cast<int>(extent_q - q0 < tile_q ? extent_q - q0 : tile_q);
        return spot;
    }
};

// The vector kernel's tile for element type T (an unsigned integer of the element's size).
template <class T> struct VectorTile {
    using Tuning = TransposeTuning;
    // Shared memory is read in words: 32-bit ones holding `pack` elements, or single 8-byte elements.
    using Word = cuda::std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
    static constexpr int vec = 16 / sizeof(T);           // elements in a 16-byte chunk
    static constexpr int pack = sizeof(Word) / sizeof(T);  // elements in a word
    static constexpr int chunk_words = 16 / sizeof(Word);
    static constexpr int row_bytes = Tuning::vector_row_bytes<T>;
    static constexpr int row_chunks = row_bytes / 16;
    static constexpr int tile_p = row_bytes / sizeof(T);
    static constexpr int tile_q = Tuning::vector_tile_bytes / row_bytes;
    static constexpr int q_vectors = tile_q / vec;  // 16-byte output vectors along q per tile column
    static constexpr int loads = tile_q * row_chunks / Tuning::threads;              // chunks per thread
    static constexpr int stores = tile_p / pack * q_vectors / Tuning::threads;     // word tasks per thread
    static_assert(row_bytes % 128 == 0, "tile rows must span whole rows of the 32 banks");
    static_assert(tile_q * row_chunks % Tuning::threads == 0 && tile_p / pack * q_vectors % Tuning::threads == 0,
                  "the block must cover the tile in whole steps");
    static_assert(q_vectors % (warp_threads / chunk_words) == 0, "a warp's q-vectors must share a tile column");

    // Byte offset of 16-byte chunk c of tile row q.  Chunk columns are XOR-swizzled by row so that
    // a quarter warp's 8 consecutive chunks of one row, and one word of 8 consecutive q-vectors (the
    // rows q + vec * i, which a warp reads down a column), each fall in 8 distinct bank groups.
    static __device__ __forceinline__ int chunk_offset(int q, int c)
    {
        return q * row_bytes + ((c ^ ((q ^ (q / vec)) & 7)) << 4);
    }
};

// Reads word(r), r < Vec (tile row q + r: the `Pack` elements p .. p + Pack - 1), and writes Pack
// chunks along q: chunks[e] holds row p + e, elements q .. q + Vec - 1.  Bytes and halves move with
// byte permutes, Pack rows at a time.
template <int Vec, int Pack, class Word, class Fetch>
__device__ __forceinline__ void transpose_words(Fetch word, Word (&chunks)[Pack][Vec / Pack])
{
    if constexpr (Pack == 1) {
#pragma unroll
        for (int m = 0; m < Vec; ++m) chunks[0][m] = word(m);
    } else if constexpr (Pack == 2) {
#pragma unroll
        for (int m = 0; m < Vec / 2; ++m) {
            const uint32_t even = word(2 * m), odd = word(2 * m + 1);
            chunks[0][m] = __byte_perm(even, odd, 0x5410);
            chunks[1][m] = __byte_perm(even, odd, 0x7632);
        }
    } else {
        static_assert(Pack == 4, "words hold 1, 2 or 4 elements");
#pragma unroll
        for (int m = 0; m < Vec / 4; ++m) {  // a 4 x 4 byte transpose
            const uint32_t w0 = word(4 * m), w1 = word(4 * m + 1), w2 = word(4 * m + 2), w3 = word(4 * m + 3);
            const uint32_t low01 = __byte_perm(w0, w1, 0x5140), high01 = __byte_perm(w0, w1, 0x7362);
            const uint32_t low23 = __byte_perm(w2, w3, 0x5140), high23 = __byte_perm(w2, w3, 0x7362);
            chunks[0][m] = __byte_perm(low01, low23, 0x5410);
            chunks[1][m] = __byte_perm(low01, low23, 0x7632);
            chunks[2][m] = __byte_perm(high01, high23, 0x5410);
            chunks[3][m] = __byte_perm(high01, high23, 0x7632);
        }
    }
}

// Stores 16 bytes given as 32-bit or 64-bit words.
template <class T> __device__ __forceinline__ void store16(T *dst, const uint32_t (&words)[4])
{
    *reinterpret_cast<uint4 *>(dst) = make_uint4(words[0], words[1], words[2], words[3]);
}
template <class T> __device__ __forceinline__ void store16(T *dst, const uint64_t (&words)[2])
{
    *reinterpret_cast<ulonglong2 *>(dst) = make_ulonglong2(words[0], words[1]);
}

template <class T>
__global__ void __launch_bounds__(TransposeTuning::threads, TransposeTuning::vector_min_blocks<T>)
transpose_vector_kernel(const T *__restrict__ in, T *__restrict__ out, TilePlan plan, int64_t first_tile)
{
    using Tile = VectorTile<T>;
    using Word = typename Tile::Word;
    constexpr int threads = TransposeTuning::threads;
    __shared__ alignas(16) unsigned char tile[TransposeTuning::vector_tile_bytes];
    const TileSpot spot = plan.locate(first_tile + blockIdx.x);

    // Loads: chunk l is chunk l % row_chunks of tile row l / row_chunks, all in flight at once.
    // Chunks are held as 16-byte vectors of shared-memory words: a vector of small elements would
    // take a register each, and with 8-byte elements held as uint4 ptxas copied each loaded chunk
    // to other registers before issuing the next load, so that every load waited for the one
    // before (float64 16384^2: 0.76x memcpy, 0.90x without the copies).
    Vec16<Word> chunks[Tile::loads];
#pragma unroll
    for (int k = 0; k < Tile::loads; ++k) {
        const int l = static_cast<int>(threadIdx.x) + k * threads;
        const int q = l / Tile::row_chunks, p = l % Tile::row_chunks * Tile::vec;
        const T *src = in + spot.src + q * plan.src_q + p;
        if (q < spot.valid_q && p + Tile::vec <= spot.valid_p) {
            chunks[k] = load_readonly(reinterpret_cast<const Vec16<Word> *>(src));
        } else if (q < spot.valid_q) {  // the tile's last, partial chunk of a row
            Vec16<T> partial{};
            for (int e = 0; e < Tile::vec && p + e < spot.valid_p; ++e) partial.v[e] = src[e];
            memcpy(&chunks[k], &partial, sizeof partial);
        }
    }
#pragma unroll
    for (int k = 0; k < Tile::loads; ++k) {
        const int l = static_cast<int>(threadIdx.x) + k * threads;
        const int q = l / Tile::row_chunks;
        if (q < spot.valid_q)
            *reinterpret_cast<Vec16<Word> *>(tile + Tile::chunk_offset(q, l % Tile::row_chunks)) = chunks[k];
    }
    __syncthreads();

    // Stores: task u reads word u % chunk_words of one chunk column in vec consecutive rows
    // (a q-vector), transposes that pack x vec block and writes `pack` 16-byte vectors along q.
    // A warp covers chunk_words words x (32 / chunk_words) consecutive q-vectors.
#pragma unroll
    for (int k = 0; k < Tile::stores; ++k) {
        const int u = static_cast<int>(threadIdx.x) + k * threads;
        const int word = u % Tile::chunk_words, rest = u / Tile::chunk_words;
        const int q = rest % Tile::q_vectors * Tile::vec, column = rest / Tile::q_vectors;
        const int p = (column * Tile::chunk_words + word) * Tile::pack;
        if (q >= spot.valid_q || p >= spot.valid_p) continue;
        const auto row_word = [&](int r) {
            return *reinterpret_cast<const Word *>(tile + Tile::chunk_offset(q + r, column) +
                                                   word * static_cast<int>(sizeof(Word)));
        };
        Word packed[Tile::pack][Tile::chunk_words];
        transpose_words<Tile::vec, Tile::pack>(row_word, packed);
#pragma unroll
        for (int e = 0; e < Tile::pack; ++e)
            if (p + e < spot.valid_p) store16(out + spot.dst + (p + e) * plan.dst_p + q, packed[e]);
    }
}

// Copies a contiguous run of `count` elements with the block: in 16-byte words when both ends
// are 16-byte aligned, else element by element.
template <class T> __device__ __forceinline__ void copy_run(const T *src, T *dst, int count)
{
    constexpr int vec = 16 / sizeof(T);
    int done = 0;
    if (((reinterpret_cast<uintptr_t>(src) | reinterpret_cast<uintptr_t>(dst)) & 15) == 0) {
        done = count / vec * vec;
        for (int c = static_cast<int>(threadIdx.x); c < count / vec; c += blockDim.x)
            reinterpret_cast<uint4 *>(dst)[c] = reinterpret_cast<const uint4 *>(src)[c];
    }
    for (int e = done + static_cast<int>(threadIdx.x); e < count; e += blockDim.x) dst[e] = src[e];
}

template <class T>
__global__ void __launch_bounds__(TransposeTuning::threads, TransposeTuning::element_min_blocks)
transpose_elements_kernel(const T *__restrict__ in, T *__restrict__ out, TilePlan plan, int64_t first_tile)
{
    constexpr int threads = TransposeTuning::threads, batch = TransposeTuning::element_batch;
    __shared__ alignas(16) T tile[TransposeTuning::element_capacity];
    const int count = plan.tile_p * plan.tile_q;
    const TileSpot spot = plan.locate(first_tile + blockIdx.x);

    if (plan.flat_load) {
        copy_run(in + spot.src, tile, spot.valid_q * plan.tile_p);
    } else {  // consecutive threads read along p, `batch` loads in flight before their stores
        ThreadWalk load(plan.tile_p, plan.src_p, plan.src_q, plan.smem_p, plan.smem_q);
        for (int l0 = 0; l0 < count; l0 += threads * batch) {
            T values[batch];
            int slots[batch];
#pragma unroll
            for (int j = 0; j < batch; ++j, load.next()) {
                const bool valid = load.major < spot.valid_q && load.minor < spot.valid_p;
                slots[j] = valid ? load.near : -1;
                if (valid) values[j] = in[spot.src + load.far];
            }
#pragma unroll
            for (int j = 0; j < batch; ++j)
                if (slots[j] >= 0) tile[slots[j]] = values[j];
        }
    }
    __syncthreads();
    if (plan.flat_store) {
        copy_run(static_cast<const T *>(tile), out + spot.dst, spot.valid_p * plan.tile_q);
    } else {  // consecutive threads write along q
        ThreadWalk store(plan.tile_q, 1, plan.dst_p, plan.smem_q, plan.smem_p);
        for (int m = static_cast<int>(threadIdx.x); m < count; m += threads, store.next())
            if (store.major < spot.valid_p && store.minor < spot.valid_q) out[spot.dst + store.far] = tile[store.near];
    }
}

// Copies rows of the last dimension: out row r (contiguous) = in[row_offset(r) + i * src_step].
struct RowPlan {
    int64_t length, src_step, rows;
    int rows_per_block;  // whole rows one block copies, or 1
    int segment;         // elements of a row one block copies
    int64_t segments;    // segments per row
    OuterDims outer;     // the dimensions before the last
};

template <class T>
__global__ void __launch_bounds__(TransposeTuning::threads)
copy_rows_kernel(const T *__restrict__ in, T *__restrict__ out, RowPlan plan, int64_t first_block)
{
    constexpr int threads = TransposeTuning::threads, batch = TransposeTuning::element_batch;
    __shared__ int64_t row_src[threads];
    const int64_t block = first_block + blockIdx.x;
    const int64_t row0 = block / plan.segments * plan.rows_per_block;
    const int64_t col0 = block % plan.segments * plan.segment;
    const int rows = static_cast<int>(plan.rows - row0 < plan.rows_per_block ? plan.rows - row0 : plan.rows_per_block);
    const int cols = static_cast<int>(plan.length - col0 < plan.segment ? plan.length - col0 : plan.segment);
    if (static_cast<int>(threadIdx.x) < rows) {
        int64_t src, dst;
        plan.outer.offsets(row0 + threadIdx.x, src, dst);
        row_src[threadIdx.x] = src + col0 * plan.src_step;
    }
    __syncthreads();
    T *dst = out + row0 * plan.length + col0;
    ThreadWalk walk(cols, plan.src_step, 0, 1, static_cast<int>(plan.length));  // minor: column; near: output
    for (int e0 = 0; e0 < rows * cols; e0 += threads * batch) {
        T values[batch];
        int slots[batch];
#pragma unroll
        for (int j = 0; j < batch; ++j, walk.next()) {
            const bool valid = walk.major < rows;
            slots[j] = valid ? walk.near : -1;
            if (valid) values[j] = in[row_src[walk.major] + walk.far];
        }
#pragma unroll
        for (int j = 0; j < batch; ++j)
            if (slots[j] >= 0) dst[slots[j]] = values[j];
    }
}

// Launches `blocks` blocks of `kernel` in grids of at most max_grid_x, each told its first block.
template <class Kernel, class... Args>
int launch_blocks(Kernel kernel, int64_t blocks, gp_error *err, Args... args)
{
    for (int64_t first = 0; first < blocks; first += LaunchLimits::max_grid_x) {
        const int64_t grid = blocks - first < LaunchLimits::max_grid_x ? blocks - first : LaunchLimits::max_grid_x;
        kernel<<<static_cast<unsigned>(grid), TransposeTuning::threads, 0, work_stream()>>>(args..., first);
        GP_CHECK_LAUNCH(err, "transpose kernel launch");
    }
    return 0;
}

// Whether shared-tile rows of `length` elements of `size` bytes can be packed densely: a warp
// walking down a column of them (a stride of one row) then meets each bank at most twice.
bool dense_rows_fit(int64_t length, int64_t size)
{
    const int64_t bytes = length * size;
    if (size == 8) return length % 2 == 1;  // 8-byte accesses: bank pairs, half a warp at a time
    return bytes % 4 != 0 || bytes / 4 % 2 == 1;
}

// Row pitch (elements) for shared-tile rows of `length` elements: the length itself when dense rows
// fit, else whole 4-byte bank words (for 8-byte elements, whole elements), an odd number of them, so
// that a warp walking down a column meets every bank once.
int row_pitch(int64_t length, int64_t size)
{
    if (dense_rows_fit(length, size)) return static_cast<int>(length);
    const int64_t unit = size < 4 ? 4 / size : 1;
    int64_t pitch = ceil_div(length, unit) * unit;
    if (pitch / unit % 2 == 0) pitch += unit;
    return static_cast<int>(pitch);
}

// Tile extent along the long side of a thin tile whose short side holds `across` elements in rows
// of `pitch`: whole multiples of the block (each thread then keeps its position along the long
// side), about thin_tile_elements in all, within the shared capacity and the extent.
int thin_tile_length(int64_t extent, int64_t across, int pitch)
{
    using Tuning = TransposeTuning;
    const int64_t blocks = ceil_div(Tuning::thin_tile_elements, across * Tuning::threads);
    const int64_t length = blocks * Tuning::threads;
    const int64_t room = Tuning::element_capacity / pitch;
    return static_cast<int>(length < room ? (length < extent ? length : extent) : (room < extent ? room : extent));
}

// The element kernel's tile: square, or thin: a short side (shorter than a warp) held whole, kept in
// shared memory as the rows of the tile (dense when the banks allow, and then the side that is
// contiguous in memory is copied as one run), and the long side grown.
void shape_element_tile(TilePlan &plan, int64_t size)
{
    using Tuning = TransposeTuning;
    const int64_t extent_p = plan.extent_p, extent_q = plan.extent_q;
    if (extent_q < Tuning::thin_extent && extent_q < extent_p) {  // short output rows
        const int pitch = row_pitch(extent_q, size);
        plan.tile_q = static_cast<int>(extent_q);
        plan.tile_p = thin_tile_length(extent_p, extent_q, pitch);
        plan.smem_p = pitch;
        plan.smem_q = 1;
        plan.flat_store = pitch == extent_q && plan.dst_p == extent_q;
    } else if (extent_p < Tuning::thin_extent) {  // short source rows
        const int pitch = row_pitch(extent_p, size);
        plan.tile_p = static_cast<int>(extent_p);
        plan.tile_q = thin_tile_length(extent_q, extent_p, pitch);
        plan.smem_p = 1;
        plan.smem_q = pitch;
        plan.flat_load = pitch == extent_p && plan.src_p == 1 && plan.src_q == extent_p;
    } else {
        plan.tile_p = static_cast<int>(extent_p < Tuning::element_edge ? extent_p : Tuning::element_edge);
        plan.tile_q = static_cast<int>(extent_q < Tuning::element_edge ? extent_q : Tuning::element_edge);
        plan.smem_p = 1;
        plan.smem_q = row_pitch(plan.tile_p, size);
    }
}

// Whether the vector kernel applies: p contiguous, every tile row of source and destination on a
// 16-byte boundary, and the plane at least half a tile each way.
template <class T> bool vector_tiles_fit(const TilePlan &plan, const void *in, const void *out)
{
    using Tile = VectorTile<T>;
    const auto on_16_bytes = [](int64_t elements) { return elements * static_cast<int64_t>(sizeof(T)) % 16 == 0; };
    bool fit = plan.src_p == 1 && on_16_bytes(plan.src_q) && on_16_bytes(plan.extent_q) &&
               reinterpret_cast<uintptr_t>(in) % 16 == 0 && reinterpret_cast<uintptr_t>(out) % 16 == 0 &&
               2 * plan.extent_p >= Tile::tile_p && 2 * plan.extent_q >= Tile::tile_q;
    for (int d = 0; d < plan.outer.ndim; ++d) fit = fit && on_16_bytes(plan.outer.src[d]);
    return fit;
}

template <class T>
int launch_transpose(const gp_copy_args &copy, const T *in, T *out, int tile_axis, const int64_t *dst_strides,
                     gp_error *err)
{
    const int last = copy.ndim - 1;
    TilePlan plan{};
    plan.extent_p = copy.shape[tile_axis];
    plan.extent_q = copy.shape[last];
    plan.src_p = copy.strides[tile_axis];
    plan.src_q = copy.strides[last];
    plan.dst_p = dst_strides[tile_axis];
    int64_t outer_count = 1;
    for (int d = 0; d < last; ++d) {
        if (d == tile_axis) continue;
        plan.outer.add(copy.shape[d], copy.strides[d], dst_strides[d]);
        outer_count *= copy.shape[d];
    }
    const bool vector = vector_tiles_fit<T>(plan, in, out);
    if (vector) {
        plan.tile_p = VectorTile<T>::tile_p;
        plan.tile_q = VectorTile<T>::tile_q;
    } else {
        shape_element_tile(plan, sizeof(T));
    }
    plan.tiles_p = ceil_div(plan.extent_p, plan.tile_p);
    plan.tiles_q = ceil_div(plan.extent_q, plan.tile_q);
    plan.tiles = plan.tiles_p * plan.tiles_q * outer_count;
    return vector ? launch_blocks(transpose_vector_kernel<T>, plan.tiles, err, in, out, plan)
                  : launch_blocks(transpose_elements_kernel<T>, plan.tiles, err, in, out, plan);
}

template <class T>
int launch_rows(const gp_copy_args &copy, const T *in, T *out, const int64_t *dst_strides, gp_error *err)
{
    using Tuning = TransposeTuning;
    const int last = copy.ndim - 1;
    RowPlan plan{};
    plan.length = copy.shape[last];
    plan.src_step = copy.strides[last];
    plan.rows = 1;
    for (int d = 0; d < last; ++d) {
        plan.outer.add(copy.shape[d], copy.strides[d], dst_strides[d]);
        plan.rows *= copy.shape[d];
    }
    const int64_t whole_rows = Tuning::row_block_elements / plan.length;
    plan.rows_per_block = static_cast<int>(whole_rows < 1 ? 1 : whole_rows < Tuning::threads ? whole_rows : Tuning::threads);
    plan.segment = static_cast<int>(plan.length < Tuning::row_block_elements ? plan.length : Tuning::row_block_elements);
    plan.segments = ceil_div(plan.length, plan.segment);
    return launch_blocks(copy_rows_kernel<T>, ceil_div(plan.rows, plan.rows_per_block) * plan.segments, err, in,
                         out, plan);
}

}  // namespace

int launch_copy(const gp_copy_args &args, const void *in, void *out, gp_error *err)
{
    gp_copy_args copy = args;
    gp_copy_simplify(&copy, in, out);
    const int64_t count = gp_copy_count(&copy);
    if (count == 0) return 0;
    const int last = copy.ndim - 1;
    if (last < 0 || (last == 0 && copy.strides[0] == 1)) {  // the layout is kept
        GP_CUDA_TRY(cudaMemcpyAsync(out, in, static_cast<size_t>(count * copy.elem_size), cudaMemcpyDeviceToDevice,
                                    work_stream()),
                    err, "cudaMemcpyAsync");
        return 0;
    }
    int64_t dst_strides[GP_MAX_DIMS];
    dst_strides[last] = 1;
    for (int d = last - 1; d >= 0; --d) dst_strides[d] = dst_strides[d + 1] * copy.shape[d + 1];
    const int tile_axis = gp_copy_tile_axis(&copy);
    return dispatch_element_size(copy.elem_size, err, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T *typed_in = static_cast<const T *>(in);
        T *typed_out = static_cast<T *>(out);
        return tile_axis < 0 ? launch_rows<T>(copy, typed_in, typed_out, dst_strides, err)
                             : launch_transpose<T>(copy, typed_in, typed_out, tile_axis, dst_strides, err);
    });
}

int copy_resident(int, const gp_call &call, gp_error *err) { return launch_copy(call.copy, call.in, call.out, err); }

}  // namespace gp
