// Scans (sum, product, min, max; NaN-skipping sums and products) along the middle axis of
// (outer, n, inner): every kernel takes the operator as a template parameter (common.cuh).
//   inner == 1, long rows:  scan_tiles_kernel, a single pass with decoupled look-back (Merrill &
//                           Garland) over groups of 32 tiles: each tile publishes its aggregate,
//                           each group its total, then its inclusive prefix, in an order fixed
//                           whatever the timing (look_back).  Every row is a run of tiles; the
//                           look-back stops at the row's first group.  Block
//                           i scans tile i: like CUB, this relies on blocks being dispatched in
//                           index order, so a tile's predecessors are running or done;
//   inner == 1, short rows: scan_short_rows_kernel, a logical warp per row;
//   inner > 1:              scan_columns_kernel, a thread per column; when columns are few, n is
//                           cut into chunks whose totals (reduce_columns_kernel) are scanned first.
// Every form can start each row from a carry and leave its total in another (launch_scan in
// scan.cuh), which is how the streamed scan (scan_tiler.cu) carries rows across its tiles.
#include <cuda/atomic>

#include <algorithm>

#include "primitives.cuh"
#include "reduce/reduce_kernels.cuh"
#include "scan/scan.cuh"

namespace gp {

// The tuning structs have external linkage: nvcc 13.0 warns (#114) about member variable templates
// of types inside an anonymous namespace.  Everything else here is file-private.

// Tuning constants of the scan kernels.  The tile kernel keeps its tile in shared memory, not in
// registers, so many tiles are in flight per SM while their look-backs wait: a tile spends about
// twice as long waiting for its predecessors as loading its data (globaltimer trace, 2^28 float32).
struct ScanTuning {
    static constexpr int threads = 128;           // tile kernel block size
    // register cap that lets shared memory set occupancy (Turing holds 8 blocks of 128)
    static constexpr int min_blocks_per_sm = LaunchLimits::min_blocks(threads, 12);
    // Items per thread: 32 (a 16 KB float32 tile); 16 where 8-byte or widening elements would
    // push the shared-memory tile past the 48 KB static limit.
    template <class In, class Out>
    static constexpr int items = sizeof(In) >= 8 || sizeof(Out) > sizeof(In) ? 16 : 32;
    static constexpr int short_row_items = 4;  // consecutive items per lane in the short-row kernel
    // Grid cap of the short-row kernel (a sizing rule from the first version, not a measured optimum).
    static constexpr int64_t short_rows_blocks_per_sm = 64;
    static constexpr unsigned look_back_sleep_ns = 16;      // first back-off while a predecessor runs
    static constexpr unsigned look_back_max_sleep_ns = 256; // longer sleeps overshoot the predecessor
};

namespace {

enum : uint32_t { tile_invalid = 0, tile_aggregate = 1, tile_prefix = 2 };

// A streamed scan (scan_tiler.cu) runs in pieces: each row starts from in[row], the total of the
// row's earlier pieces (the operator's running value), and leaves its own total in out[row].  Both
// null for a whole-array scan.
template <class Op, class Acc> struct ScanCarry {
    const Acc *in;
    Acc *out;
    __device__ Acc start(int64_t row) const { return in ? in[row] : Op::template identity<Acc>(); }
    __device__ void finish(int64_t row, Acc total) const
    {
        if (out) out[row] = total;
    }
};

template <class Acc> struct TileStatus {
    uint32_t flag;
    Acc value;
};

// Per-tile status of one single-pass scan, in zeroed device memory.  4-byte accumulators share one
// 64-bit word with their flag, so a reader gets both in one load (one L2 round trip).  8-byte ones
// keep flags apart: the value is stored before its flag is released, and aggregate and inclusive
// prefix live in separate arrays so a reader that saw a flag reads the value that flag announced.
template <class Acc, bool Packed = sizeof(Acc) == 4> struct TileState;

template <class Acc> struct TileState<Acc, true> {
    unsigned long long *words;

    static size_t bytes_per_tile() { return sizeof(unsigned long long); }
    void bind(void *storage, int64_t) { words = static_cast<unsigned long long *>(storage); }

    __device__ void publish(int64_t tile, uint32_t flag, Acc value) const
    {
        uint32_t bits;
        memcpy(&bits, &value, sizeof bits);
        const unsigned long long word = (static_cast<unsigned long long>(flag) << 32) | bits;
        cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(words[tile]).store(
            word, cuda::memory_order_relaxed);
    }

    __device__ TileStatus<Acc> wait(int64_t tile) const
    {
        cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> slot(words[tile]);
        unsigned long long word;
        for (unsigned sleep_ns = ScanTuning::look_back_sleep_ns;
             ((word = slot.load(cuda::memory_order_relaxed)) >> 32) == tile_invalid;
             sleep_ns = sleep_ns < ScanTuning::look_back_max_sleep_ns ? 2 * sleep_ns : sleep_ns)
            __nanosleep(sleep_ns);
        TileStatus<Acc> status;
        status.flag = static_cast<uint32_t>(word >> 32);
        const uint32_t bits = static_cast<uint32_t>(word);
        memcpy(&status.value, &bits, sizeof bits);
        return status;
    }
};

template <class Acc> struct TileState<Acc, false> {
    uint32_t *flags;
    Acc *aggregate;
    Acc *inclusive;

    static size_t bytes_per_tile() { return sizeof(uint32_t) + 2 * sizeof(Acc); }
    void bind(void *storage, int64_t tiles)
    {
        aggregate = static_cast<Acc *>(storage);
        inclusive = aggregate + tiles;
        flags = reinterpret_cast<uint32_t *>(inclusive + tiles);
    }

    __device__ void publish(int64_t tile, uint32_t flag, Acc value) const
    {
        Acc *slot = flag == tile_prefix ? inclusive + tile : aggregate + tile;
        cuda::atomic_ref<Acc, cuda::thread_scope_device>(*slot).store(value, cuda::memory_order_relaxed);
        cuda::atomic_ref<uint32_t, cuda::thread_scope_device>(flags[tile]).store(
            flag, cuda::memory_order_release);
    }

    __device__ TileStatus<Acc> wait(int64_t tile) const
    {
        cuda::atomic_ref<uint32_t, cuda::thread_scope_device> flag(flags[tile]);
        TileStatus<Acc> status;
        for (unsigned sleep_ns = ScanTuning::look_back_sleep_ns;
             (status.flag = flag.load(cuda::memory_order_acquire)) == tile_invalid;
             sleep_ns = sleep_ns < ScanTuning::look_back_max_sleep_ns ? 2 * sleep_ns : sleep_ns)
            __nanosleep(sleep_ns);
        Acc *slot = status.flag == tile_prefix ? inclusive + tile : aggregate + tile;
        status.value = cuda::atomic_ref<Acc, cuda::thread_scope_device>(*slot).load(cuda::memory_order_relaxed);
        return status;
    }
};

// The tiles of a row form groups of 32 (a warp's lanes).  A tile's exclusive prefix is defined as
//   prefix(group before) op scan(the group's aggregates before the tile),
// where the scan is the warp's inclusive scan in lane order and prefix(g) = prefix(g - 1) op
// total(g), a left fold of the group totals from the row's start.  Every term has one order,
// whichever predecessors happened to be done, so a scan gives the same bits every run.  (CUB's
// look-back combines whatever aggregates and prefixes it finds as a tree, which rounds differently
// from run to run.)  Folding a tile at a time instead chains every tile to the prefixes' progress:
// 0.27x memcpy for a 2^28 float32 scan on the H200.
//
// Tile and group indices fit 32 bits: a launch has at most 2^31 - 1 tiles (max_grid_x).  With 64-bit
// ones, and two values kept across the wait in look_back, 8-byte scans spilled registers (float64
// 0.56x memcpy, against 0.61x before the groups).
struct TileGroups {
    int tile;       // the tile
    int group, g;   // its group (index into the group state), and the group's place in its row
    int position;   // the tile's lane in its group
    bool last;      // the last tile of its group: it publishes the group's total and prefix
};

__device__ inline TileGroups tile_groups(int64_t tile, int64_t tiles_per_row)
{
    const int64_t row = tile / tiles_per_row, t = tile - row * tiles_per_row;
    const int64_t groups_per_row = ceil_div(tiles_per_row, static_cast<int64_t>(warp_threads));
    TileGroups at;
    at.tile = static_cast<int>(tile);
    at.g = static_cast<int>(t / warp_threads);
    at.group = static_cast<int>(row * groups_per_row + at.g);
    at.position = static_cast<int>(t % warp_threads);
    at.last = at.position == warp_threads - 1 || t == tiles_per_row - 1;
    return at;
}

// prefix(g - 1) for group g >= 1 (`before` is the group state index of g - 1): the left fold of the
// group totals from the nearest group prefix published among the 32 groups before g (waiting for
// one); the row's start stands for the prefix before its first group.  Every lane gets it.
template <class Op, class Acc>
__device__ Acc groups_prefix(const TileState<Acc> &groups, int before, int groups_before, Acc start, Op op)
{
    const int lane = threadIdx.x % warp_threads;
    const bool in_row = lane < groups_before;  // lane k reads group before - k
    TileStatus<Acc> status{tile_prefix, start};
    unsigned prefix_lanes;
    for (unsigned sleep_ns = ScanTuning::look_back_sleep_ns;;
         sleep_ns = sleep_ns < ScanTuning::look_back_max_sleep_ns ? 2 * sleep_ns : sleep_ns) {
        if (in_row) status = groups.wait(before - lane);
        prefix_lanes = __ballot_sync(full_mask, status.flag == tile_prefix);
        if (prefix_lanes) break;
        __nanosleep(sleep_ns);
    }
    const int nearest = __ffs(prefix_lanes) - 1;
    Acc prefix = __shfl_sync(full_mask, status.value, nearest);
    for (int k = nearest - 1; k >= 0; --k) prefix = op(prefix, __shfl_sync(full_mask, status.value, k));
    return prefix;
}

// Run by the first warp of a tile: publishes what later tiles need (the tile's aggregate; for a
// group's last tile, the group's total, then its prefix) and returns the tile's exclusive prefix.
template <class Op, class Acc>
__device__ Acc look_back(const TileState<Acc> &tiles, const TileState<Acc> &groups, const TileGroups &at,
                         Acc start, Acc block_total, Op op)
{
    const int lane = threadIdx.x % warp_threads;
    if (lane == 0 && !at.last) tiles.publish(at.tile, tile_aggregate, block_total);
    Acc value = Op::template identity<Acc>();  // the group's aggregates up to this tile's, in lane order
    if (lane < at.position) value = tiles.wait(at.tile - at.position + lane).value;
    if (lane == at.position) value = block_total;
    const Acc scanned = warp_inclusive_scan(value, op);
    // (Lanes are read from `scanned` where they are used: one value live across the wait, not two.)
    if (at.last) {
        const Acc total = __shfl_sync(full_mask, scanned, at.position);
        if (lane == 0) groups.publish(at.group, tile_aggregate, total);
    }
    const Acc before = at.g == 0 ? start : groups_prefix(groups, at.group - 1, at.g, start, op);
    if (at.last) {
        const Acc total = __shfl_sync(full_mask, scanned, at.position);
        if (lane == 0) groups.publish(at.group, tile_prefix, op(before, total));
    }
    const Acc within = __shfl_sync(full_mask, scanned, at.position > 0 ? at.position - 1 : 0);
    return at.position == 0 ? before : op(before, within);
}

template <class Op, class In, class Acc, class Out>
__global__ void __launch_bounds__(ScanTuning::threads, ScanTuning::min_blocks_per_sm)
scan_tiles_kernel(const In *in, Out *out, int64_t n, int64_t tiles_per_row, TileState<Acc> tiles, TileState<Acc> groups,
                  int exclusive, ScanCarry<Op, Acc> carry)
{
    constexpr int threads = ScanTuning::threads;
    constexpr int items = ScanTuning::items<In, Out>;
    constexpr int64_t tile_items = static_cast<int64_t>(threads) * items;
    using Tile = WarpTile<items>;
    // Outputs overwrite their inputs in place when both have one size, else get their own slots.
    constexpr bool in_place = sizeof(In) == sizeof(Out);
    constexpr int warp_bytes = Tile::template bytes<In> + (in_place ? 0 : Tile::template bytes<Out>);
    __shared__ alignas(16) unsigned char tile_storage[threads / warp_threads][warp_bytes];
    __shared__ Acc scratch[threads / warp_threads];
    __shared__ Acc shared_prefix;
    const Op op;

    const int64_t tile = blockIdx.x;
    const int64_t row = tile / tiles_per_row, t = tile - row * tiles_per_row;
    const int64_t offset = row * n + t * tile_items;
    const int64_t valid = n - t * tile_items < tile_items ? n - t * tile_items : tile_items;
    // Each warp owns a contiguous segment of the tile; lanes own consecutive items within it.
    const int warp = threadIdx.x / warp_threads;
    const int64_t warp_offset = offset + static_cast<int64_t>(warp) * Tile::warp_items;
    const int64_t warp_valid = valid - static_cast<int64_t>(warp) * Tile::warp_items;
    In *in_tile = reinterpret_cast<In *>(tile_storage[warp]);
    Out *out_tile = reinterpret_cast<Out *>(tile_storage[warp] + (in_place ? 0 : Tile::template bytes<In>));

    Tile::stage(in + warp_offset, warp_valid, in_tile);
    Acc thread_total = Op::template identity<Acc>();
    Tile::template visit<Op, Acc>(in_tile, warp_valid, [&](int, Acc x) { thread_total = op(thread_total, x); });
    Acc block_total;
    const Acc thread_prefix = block_exclusive_scan<threads>(thread_total, op, scratch, block_total);

    if (threadIdx.x < warp_threads) {
        const Acc prefix = look_back(tiles, groups, tile_groups(tile, tiles_per_row), carry.start(row), block_total, op);
        if (threadIdx.x == 0) shared_prefix = prefix;
    }
    __syncthreads();
    const Acc tile_prefix_value = shared_prefix;

    if (t == tiles_per_row - 1 && threadIdx.x == 0) carry.finish(row, op(tile_prefix_value, block_total));
    Acc running = op(tile_prefix_value, thread_prefix);
    Tile::template transform<Op, Acc>(in_tile, out_tile, warp_valid, [&](Acc x) {
        const Acc before = running;
        running = op(running, x);
        return convert<Out>(exclusive ? numpy_sum<Op>(before) : running);
    });
    Tile::flush(out + warp_offset, warp_valid, out_tile);
}

// Rows shorter than a tile: a logical warp of `width` lanes per row, each lane `items` consecutive
// elements per step, carrying the running total from step to step.
template <class Op, class In, class Acc, class Out>
__global__ void __launch_bounds__(ReduceTuning::threads)
scan_short_rows_kernel(const In *in, Out *out, int64_t rows, int64_t n, int width, int exclusive,
                       ScanCarry<Op, Acc> row_carry)
{
    constexpr int items = ScanTuning::short_row_items;
    const Op op;
    const LogicalWarpRows assigned(width);
    const int lane = assigned.lane;
    for (int64_t base = assigned.first; base < rows; base += assigned.stride) {
        const int64_t row = base + assigned.group;
        const bool active = row < rows;
        const In *src = in + row * n;
        Out *dst = out + row * n;
        Acc carry = active ? row_carry.start(row) : Op::template identity<Acc>();
        for (int64_t start = 0; start < n; start += static_cast<int64_t>(width) * items) {
            const int64_t first = start + static_cast<int64_t>(lane) * items;
            Acc values[items];
#pragma unroll
            for (int i = 0; i < items; ++i)
                values[i] = active && first + i < n ? operand<Acc, Op>(src[first + i]) : Op::template identity<Acc>();
#pragma unroll
            for (int i = 1; i < items; ++i) values[i] = op(values[i - 1], values[i]);
            const Acc inclusive = warp_inclusive_scan(values[items - 1], op, width);
            Acc lane_prefix = __shfl_up_sync(full_mask, inclusive, 1, width);
            if (lane == 0) lane_prefix = Op::template identity<Acc>();
            const Acc before = op(carry, lane_prefix);
#pragma unroll
            for (int i = 0; i < items; ++i)
                if (active && first + i < n)
                    dst[first + i] = convert<Out>(exclusive ? numpy_sum<Op>(i == 0 ? before : op(before, values[i - 1]))
                                                            : op(before, values[i]));
            carry = op(carry, __shfl_sync(full_mask, inclusive, width - 1, width));
        }
        if (active && lane == 0) row_carry.finish(row, carry);
    }
}

// inner > 1: a thread per column walks its chunk with stride `inner` (coalesced across the warp),
// starting from carry[(o * chunks + chunk) * inner + i] when carry is given; the last chunk leaves
// the column's total in totals[o * inner + i] when totals is given.  in may equal out.  Carries:
// the outputs are other chunks' carries, kept as the operator made them (not as NumPy shows them).
template <class Op, class In, class Acc, class Out, bool Carries = false>
__global__ void __launch_bounds__(ReduceTuning::threads)
scan_columns_kernel(const In *in, Out *out, int64_t outer, int64_t n, int64_t inner, int64_t chunk,
                    const Acc *carry, int exclusive, Acc *totals)
{
    const Op op;
    const int64_t columns = outer * inner;
    const int64_t begin = blockIdx.y * chunk;
    const int64_t end = begin + chunk < n ? begin + chunk : n;
    for (int64_t column = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
         column < columns; column += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const int64_t o = column / inner, i = column - o * inner;
        const int64_t base = o * n * inner + i;
        Acc running = carry ? carry[(o * gridDim.y + blockIdx.y) * inner + i] : Op::template identity<Acc>();
        for (int64_t k = begin; k < end; ++k) {
            const Acc x = operand<Acc, Op>(in[base + k * inner]);
            if (exclusive) {
                out[base + k * inner] = convert<Out>(Carries ? running : numpy_sum<Op>(running));
                running = op(running, x);
            } else {
                running = op(running, x);
                out[base + k * inner] = convert<Out>(running);
            }
        }
        if (totals && blockIdx.y == gridDim.y - 1) totals[column] = running;
    }
}

template <class Op, class In, class Acc, class Out>
int scan_rows(int device, const In *in, Out *out, int64_t rows, int64_t n, int exclusive,
                     ScanCarry<Op, Acc> carry, gp_error *err)
{
    constexpr int threads = ScanTuning::threads;
    constexpr int64_t tile_items = static_cast<int64_t>(threads) * ScanTuning::items<In, Out>;
    const cudaStream_t stream = work_stream();

    if (n <= tile_items) {
        int width = 1;
        while (width < warp_threads && static_cast<int64_t>(width) * ScanTuning::short_row_items < n) width *= 2;
        int64_t blocks = ceil_div(rows * width, ReduceTuning::threads);
        const int64_t max_blocks =
            static_cast<int64_t>(multiprocessor_count(device)) * ScanTuning::short_rows_blocks_per_sm;
        if (blocks > max_blocks) blocks = max_blocks;
        scan_short_rows_kernel<Op, In, Acc, Out><<<static_cast<unsigned>(blocks), ReduceTuning::threads,
                                                   0, stream>>>(in, out, rows, n, width, exclusive, carry);
        GP_CHECK_LAUNCH(err, "scan_short_rows_kernel");
        return 0;
    }

    const int64_t tiles_per_row = ceil_div(n, tile_items);
    const int64_t tiles = rows * tiles_per_row;
    if (tiles > LaunchLimits::max_grid_x) return fail(err, GP_ERR_INVALID, "array too large for one scan launch");
    // Workspace: the status of every tile, then of every group of 32 tiles, all zero (tile_invalid)
    // at launch; the groups' part starts on a 16-byte boundary.
    const int64_t groups = rows * ceil_div(tiles_per_row, static_cast<int64_t>(warp_threads));
    const size_t tile_bytes = (TileState<Acc>::bytes_per_tile() * tiles + 15) / 16 * 16;
    const size_t bytes = tile_bytes + TileState<Acc>::bytes_per_tile() * groups;
    DeviceBuffer workspace;
    if (workspace.allocate(bytes, err)) return -1;
    TileState<Acc> tile_state, group_state;
    tile_state.bind(workspace.as<void>(), tiles);
    group_state.bind(workspace.as<char>() + tile_bytes, groups);
    GP_CUDA_TRY(cudaMemsetAsync(workspace.as<void>(), 0, bytes, stream), err, "cudaMemsetAsync");
    scan_tiles_kernel<Op, In, Acc, Out><<<static_cast<unsigned>(tiles), threads, 0, stream>>>(
        in, out, n, tiles_per_row, tile_state, group_state, exclusive, carry);
    GP_CHECK_LAUNCH(err, "scan_tiles_kernel");
    return 0;
}

template <class Op, class In, class Acc, class Out>
int scan_columns(int device, const In *in, Out *out, int64_t outer, int64_t n, int64_t inner,
                        int exclusive, ScanCarry<Op, Acc> carry, gp_error *err)
{
    constexpr int threads = ReduceTuning::threads;
    const cudaStream_t stream = work_stream();
    const ColumnGrid geometry =
        column_grid(device, resident_blocks_per_sm(scan_columns_kernel<Op, In, Acc, Out>), outer, n, inner);
    if (geometry.chunks == 1) {
        scan_columns_kernel<Op, In, Acc, Out><<<geometry.grid, threads, 0, stream>>>(
            in, out, outer, n, inner, n, carry.in, exclusive, carry.out);
        GP_CHECK_LAUNCH(err, "scan_columns_kernel");
        return 0;
    }
    // Chunk totals, their exclusive scan along the chunks (in place), then each chunk from its carry.
    // A streamed call's carry seeds the scan of the totals, which also yields the new carry.  The
    // totals are partials: an IgnoreNan operator combines them as its plain one.
    using PartialOp = typename plain_operator<Op>::type;
    DeviceBuffer chunk_carry;
    if (chunk_carry.allocate(sizeof(Acc) * outer * geometry.chunks * inner, err)) return -1;
    reduce_columns_kernel<Op, In, Acc, Acc><<<geometry.grid, threads, 0, stream>>>(
        in, chunk_carry.as<Acc>(), outer, n, inner, geometry.chunk);
    GP_CHECK_LAUNCH(err, "reduce_columns_kernel");
    scan_columns_kernel<PartialOp, Acc, Acc, Acc, true><<<dim3(geometry.grid.x, 1), threads, 0, stream>>>(
        chunk_carry.as<Acc>(), chunk_carry.as<Acc>(), outer, geometry.chunks, inner, geometry.chunks,
        carry.in, 1, carry.out);
    GP_CHECK_LAUNCH(err, "scan_columns_kernel");
    scan_columns_kernel<Op, In, Acc, Out><<<geometry.grid, threads, 0, stream>>>(
        in, out, outer, n, inner, geometry.chunk, chunk_carry.as<const Acc>(), exclusive, nullptr);
    GP_CHECK_LAUNCH(err, "scan_columns_kernel");
    return 0;
}

// A scan with its types fixed: rows (inner == 1) or columns.
template <class Op, class In, class Acc, class Out>
int scan_typed(int device, const gp_scan_args &args, const void *in, void *out, const void *carry_in, void *carry_out,
               gp_error *err)
{
    const In *typed_in = static_cast<const In *>(in);
    Out *typed_out = static_cast<Out *>(out);
    const ScanCarry<Op, Acc> carry{static_cast<const Acc *>(carry_in), static_cast<Acc *>(carry_out)};
    if (args.inner == 1)
        return scan_rows<Op, In, Acc, Out>(device, typed_in, typed_out, args.outer, args.n, args.exclusive, carry, err);
    return scan_columns<Op, In, Acc, Out>(device, typed_in, typed_out, args.outer, args.n, args.inner, args.exclusive,
                                          carry, err);
}

// Calls f(type_tag<Op>{}, type_tag<Acc>{}, type_tag<Out>{}) with the operator and the types of the
// scan `args` of In: sums and products by the accumulator rule (dispatch_accumulator), NaN-skipping
// for float inputs with skip_nan; min and max in minmax_accumulator<In>, the input's dtype out.
template <class In, class F> int dispatch_scan_types(const gp_scan_args &args, gp_error *err, F &&f)
{
    const auto accumulate = [&](auto op_tag) {
        using Op = typename decltype(op_tag)::type;
        return dispatch_accumulator<In>(args.out_dtype, err, [&](auto acc_tag, auto out_tag) {
            if constexpr (cuda::std::is_floating_point_v<In> || cuda::std::is_same_v<In, __half>)
                if (args.skip_nan) return f(type_tag<IgnoreNan<Op>>{}, acc_tag, out_tag);
            return f(op_tag, acc_tag, out_tag);
        });
    };
    using CompareAcc = type_tag<typename minmax_accumulator<In>::type>;
    switch (args.op) {
    case GP_SUM: return accumulate(type_tag<ScanSumOp>{});
    case GP_PROD: return accumulate(type_tag<ProdOp>{});
    case GP_MIN: return f(type_tag<MinOp>{}, CompareAcc{}, type_tag<In>{});
    case GP_MAX: return f(type_tag<MaxOp>{}, CompareAcc{}, type_tag<In>{});
    default: return fail(err, GP_ERR_INVALID, "unknown scan operator");
    }
}

// Calls f with the scan's input type and dispatch_scan_types' tags.
template <class F> int dispatch_scan(const gp_scan_args &args, gp_error *err, F &&f)
{
    return dispatch_dtype(args.in_dtype, err, [&](auto in_tag) {
        using In = typename decltype(in_tag)::type;
        return dispatch_scan_types<In>(args, err, [&](auto op_tag, auto acc_tag, auto out_tag) {
            return f(in_tag, op_tag, acc_tag, out_tag);
        });
    });
}

}  // namespace

int launch_scan(int device, const gp_scan_args &args, const void *in, void *out, const void *carry_in,
                void *carry_out, gp_error *err)
{
    return dispatch_scan(args, err, [&](auto in_tag, auto op_tag, auto acc_tag, auto out_tag) {
        return scan_typed<typename decltype(op_tag)::type, typename decltype(in_tag)::type,
                          typename decltype(acc_tag)::type, typename decltype(out_tag)::type>(device, args, in, out,
                                                                                              carry_in, carry_out, err);
    });
}

int64_t scan_carry_size(const gp_scan_args &args, gp_error *err)
{
    int64_t size = 0;
    if (dispatch_scan(args, err, [&](auto, auto, auto acc_tag, auto) {
            size = static_cast<int64_t>(sizeof(typename decltype(acc_tag)::type));
            return 0;
        }))
        return 0;
    return size;
}

int scan_resident(int device, const gp_call &call, gp_error *err)
{
    return launch_scan(device, call.scan, call.in, call.out, nullptr, nullptr, err);
}

}  // namespace gp
