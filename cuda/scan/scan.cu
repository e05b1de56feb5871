// Scans (sum, product, min, max; NaN-skipping sums and products) along the middle axis of
// (outer, n, inner): every kernel takes the operator as a template parameter (common.cuh).
//   inner == 1, long rows:  scan_tiles_kernel, a single pass with decoupled look-back (Merrill &
//                           Garland) over groups of 32 tiles: each tile publishes its aggregate,
//                           each group its total, then its inclusive prefix, in an order fixed
//                           whatever the timing (look_back).  Every row is a run of tiles; the
//                           look-back stops at the row's first group.  Block
//                           i scans tile i: like CUB, this relies on blocks being dispatched in
//                           index order, so a tile's predecessors are running or done;
//                           scan_pipeline_kernel on Hopper and later for many tiles: the same tile
//                           statuses and look-back, with persistent blocks whose warps load, reduce,
//                           look back and scan different tiles at once (see its section);
//   inner == 1, short rows: scan_short_rows_kernel, a logical warp per row;
//   inner > 1:              scan_columns_kernel, a thread per column; when columns are few, n is
//                           cut into chunks whose totals (reduce_columns_kernel) are scanned first.
// Every form can start each row from a carry and leave its total in another (launch_scan in
// scan.cuh), which is how the streamed scan (scan_tiler.cu) carries rows across its tiles.
#include <cuda/atomic>
#include <cuda/ptx>

#include <algorithm>
#include <memory>
#include <new>

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
    // Groups before a tile's own whose totals look_back folds from their tiles' aggregates.  The tile
    // kernel's 2^20-2^24 float32 scans (H200 lab, x memcpy) were level with 0 and 4 (2^24: 0 0.60-0.64,
    // 2 0.61-0.66, 4 0.60-0.64) and slower with 8 (0.58), which spills registers.
    static constexpr int near_groups = 2;
};

// Tuning constants of the pipelined tile scan (scan_pipeline_kernel, Hopper and later).  One block
// per SM keeps a ring of tiles in shared memory; its warps split the work by role (load, reduce,
// look back, scan), so the loads of later tiles go on while earlier tiles wait for their prefixes.
// Set on H100s (lab harness, one process, float32 2^28 x memcpy; the tile kernel 0.84x, CUB
// 0.81x): 36 KB tiles in 6 stages (the ring 216 KB of the 227 KB opt-in) 0.905-0.920x; 32 KB in
// 6 stages 0.888-0.896x, in 7 stages 0.900x; 16 KB in 12 stages 0.78-0.79x; 48 KB in 4 stages
// 0.85x; 64 KB in 3 stages 0.78x.  On an H200, 36 KB x 6 0.823-0.826x against 32 KB x 6
// 0.795-0.803x.  3 or 4 look-back warps instead of 2: no better.  With the near groups and the
// claim on a prefixed stage (H200 lab, 2^28 float32, three rounds): 0.907-0.917x with 8 near
// groups, 0.914-0.927x with 12, 0.888-0.898x with 6, against 0.817-0.825x with neither; on top of
// them 3 look-back warps 0.848-0.853x, 32 KB x 7 0.795x, 24 KB x 9 0.851-0.863x.  A reduce warp
// per segment instead of one per two (H200 lab, 2^28 float32, two rounds, sum / max / NaN-skipping
// sum): 0.922-0.934x / 0.903-0.914x / 0.926-0.930x against 0.935-0.938x / 0.830-0.831x /
// 0.814-0.825x; a max's reduce warp folding two segments held 126 registers and took longer than a
// tile's turn.  Scan warps that each scan a lane's consecutive vectors (one warp scan per segment,
// the outputs back through the stage): 0.915x / 0.853-0.857x / 0.913-0.919x, slower.
struct ScanPipelineTuning {
    static constexpr int segments = 8;         // a tile is this many segments, one per scan warp
    static constexpr int rows = 9;             // 16-byte lane vectors per lane and segment
    static constexpr int reduce_warps = 8;     // each reduces segments / reduce_warps segments
    static constexpr int look_back_warps = 2;  // tiles whose look-backs wait at once
    static constexpr int near_groups = 12;     // groups whose totals look_back folds from their tiles' aggregates
    static constexpr int max_stages = 6;       // tiles in the ring (36 KB each for 4-byte scans)
    static constexpr int min_stages = look_back_warps + 2;
    // The tile kernel stays faster until the rings fill a few times over: the pipelined kernel runs
    // from min_ring_fills * stages * SMs tiles (2^23.8 float32 elements on an H100 or H200).  H200
    // lab, float32 x memcpy, tile kernel / pipelined: 2^24 0.61-0.63 / 0.70-0.74, 2^23 0.57-0.58 /
    // 0.58-0.64 (one ring fill).
    static constexpr int min_ring_fills = 2;
    static constexpr int warps = 1 + look_back_warps + reduce_warps + segments;
    static constexpr int threads = warps * 32;
    // Elements a lane reads as one vector: 16 bytes of the wider of input and output.
    template <class In, class Out>
    static constexpr int lane_items = 16 / static_cast<int>(sizeof(In) > sizeof(Out) ? sizeof(In) : sizeof(Out));
    template <class In, class Out>
    static constexpr int64_t segment_items = static_cast<int64_t>(rows) * 32 * lane_items<In, Out>;
    template <class In, class Out> static constexpr int64_t tile_items = segments * segment_items<In, Out>;
};
static_assert(ScanPipelineTuning::segments % ScanPipelineTuning::reduce_warps == 0,
              "every reduce warp takes whole segments");

// Float32 products scan in double (widened_float): a tile's tree of float32 products drifts with n.
// The pipelined kernel's scan squad still folds its rows and scans them across lanes in float, with
// the carries in double (its prefixes, segment prefixes and the running value of its rows): an
// output's error then comes from the short trees of its own segment (9 rows of 128 factors), not
// from n.  H100, 2^28 float32 cumprod x memcpy: 0.86-0.87, all in double 0.75 (prefix_sum 0.98).
template <class Op, class Out>
inline constexpr bool widened_product =
    cuda::std::is_same_v<typename plain_operator<Op>::type, ProdOp> && cuda::std::is_same_v<Out, float>;

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

// A float sum's or product's note that it wrote an inf or NaN (gp_scan_args.non_finite): each
// thread looks at its outputs and, having seen one, sets the device word `flag` (unless another
// thread has), so that fp_errors.c settles the lines in NumPy's order: a running value that
// overflowed can come back finite in the order the kernels combine in, so no slice of the outputs
// would tell.  A null flag, other operators and integer outputs: nothing is looked at.
template <class Op, class Out> struct NonFiniteNote {
    static constexpr bool tracked =
        (is_sum<Op> || cuda::std::is_same_v<typename plain_operator<Op>::type, ProdOp>) &&
        (cuda::std::is_floating_point_v<Out> || cuda::std::is_same_v<Out, __half>);
    unsigned *flag;
    bool seen = false;

    __device__ explicit NonFiniteNote(unsigned *flag_) : flag(flag_) {}
    __device__ __forceinline__ void look(Out value)
    {
        if constexpr (tracked) {
            if constexpr (cuda::std::is_same_v<Out, __half>) seen |= __hisinf(value) != 0 || __hisnan(value);
            else seen |= !isfinite(value);
        }
    }
    __device__ __forceinline__ void flush() const
    {
        if constexpr (tracked)
            if (seen && flag != nullptr && *static_cast<volatile unsigned *>(flag) == 0) atomicOr(flag, 1u);
    }
};

// A look-back's wait for a predecessor: sleeps that double from look_back_sleep_ns up to
// look_back_max_sleep_ns.
struct LookBackBackoff {
    unsigned sleep_ns = ScanTuning::look_back_sleep_ns;
    __device__ void pause()
    {
        __nanosleep(sleep_ns);
        if (sleep_ns < ScanTuning::look_back_max_sleep_ns) sleep_ns *= 2;
    }
};

template <class Acc> struct TileStatus {
    uint32_t flag;
    Acc value;
};

// Per-tile status of one single-pass scan, in zeroed device memory.  A tile's flag and value share
// one word, so a reader gets both in one load (one L2 round trip) and never reads a value apart from
// the flag that announced it: 8 bytes for accumulators of up to 4 bytes, 16 for 8-byte ones.  A
// 16-byte word is stored and loaded by one 16-byte instruction (ST.E.128 and LD.E.128 in every
// instantiation, nvdisasm), which the GPU does not tear; PTX itself promises that of no vector
// access, so a change here is checked in the SASS (CUB's tile state for 8-byte values rests on the
// same hardware behaviour).  With the flags kept apart instead (the value stored before a release
// of its flag, read after an acquire: two round trips), every scan with an 8-byte accumulator ran at
// 0.76-0.89x memcpy on an H100 (2^28: float64 prefix_sum, cummax, cumprod; float32 cumprod, which
// carries in double; int32 sums and products in int64); with one word, 0.90-0.99x, as the 4-byte ones.
template <class Acc> struct TileState {
    static_assert(sizeof(Acc) <= 8, "a tile's value fits its status word");
    static constexpr bool wide = sizeof(Acc) == 8;
    using Word = cuda::std::conditional_t<wide, ulonglong2, unsigned long long>;
    Word *words;

    static size_t bytes_per_tile() { return sizeof(Word); }
    void bind(void *storage) { words = static_cast<Word *>(storage); }

    __device__ static Word pack(uint32_t flag, Acc value)
    {
        if constexpr (wide) {
            unsigned long long bits;
            memcpy(&bits, &value, sizeof bits);
            return make_ulonglong2(bits, flag);
        } else {
            uint32_t bits = 0;
            memcpy(&bits, &value, sizeof value);
            return static_cast<unsigned long long>(flag) << 32 | bits;
        }
    }
    // Relaxed (device-scope) accesses of a whole word.  A load gives the word's value and flag, so
    // that a caller's registers hold only those while the load is in flight.
    __device__ static void load(Word *at, Acc &value, uint32_t &flag)
    {
        if constexpr (wide) {
            // Two 8-byte elements, both used: ptxas keeps the load whole (LD.E.128).  A v4.u32 load
            // whose fourth element went unused became an 8-byte and a 4-byte load (nvdisasm), which
            // tore words and gave wrong prefixes.
            unsigned long long bits, flag_word;
            asm volatile("ld.relaxed.gpu.v2.u64 {%0, %1}, [%2];" : "=l"(bits), "=l"(flag_word) : "l"(at) : "memory");
            memcpy(&value, &bits, sizeof value);
            flag = static_cast<uint32_t>(flag_word);
        } else {
            const Word word = cuda::atomic_ref<Word, cuda::thread_scope_device>(*at).load(cuda::memory_order_relaxed);
            const uint32_t bits = static_cast<uint32_t>(word);
            memcpy(&value, &bits, sizeof value);
            flag = static_cast<uint32_t>(word >> 32);
        }
    }
    __device__ static void store(Word *at, const Word &word)
    {
        if constexpr (wide)
            asm volatile("st.relaxed.gpu.v2.u64 [%0], {%1, %2};" : : "l"(at), "l"(word.x), "l"(word.y) : "memory");
        else
            cuda::atomic_ref<Word, cuda::thread_scope_device>(*at).store(word, cuda::memory_order_relaxed);
    }

    __device__ void publish(int64_t tile, uint32_t flag, Acc value) const { store(words + tile, pack(flag, value)); }

    __device__ TileStatus<Acc> wait(int64_t tile) const
    {
        TileStatus<Acc> status;
        for (LookBackBackoff backoff;; backoff.pause()) {
            load(words + tile, status.value, status.flag);
            if (status.flag != tile_invalid) return status;
        }
    }

    // The values of the slots tile[k] whose bit k is set in `pending`, once each is published.  Every
    // round reads all slots still pending before it looks at any, so the reads overlap.
    template <int K> __device__ void wait_all(const int64_t (&tile)[K], unsigned pending, Acc (&value)[K]) const
    {
        for (LookBackBackoff backoff;; backoff.pause()) {
            uint32_t flag[K];
#pragma unroll
            for (int k = 0; k < K; ++k)
                if (pending >> k & 1u) load(words + tile[k], value[k], flag[k]);
#pragma unroll
            for (int k = 0; k < K; ++k)
                if ((pending >> k & 1u) && flag[k] != tile_invalid) pending &= ~(1u << k);
            if (pending == 0) return;
        }
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
    for (LookBackBackoff backoff;; backoff.pause()) {
        if (in_row) status = groups.wait(before - lane);
        prefix_lanes = __ballot_sync(full_mask, status.flag == tile_prefix);
        if (prefix_lanes) break;
    }
    const int nearest = __ffs(prefix_lanes) - 1;
    Acc prefix = __shfl_sync(full_mask, status.value, nearest);
    for (int k = nearest - 1; k >= 0; --k) prefix = op(prefix, __shfl_sync(full_mask, status.value, k));
    return prefix;
}

// What a tile publishes as soon as its aggregate is known: the aggregate itself, which later tiles
// of its group, and the tiles of the next groups, fold.
template <class Acc> __device__ void publish_aggregate(const TileState<Acc> &tiles, const TileGroups &at, Acc aggregate)
{
    tiles.publish(at.tile, tile_aggregate, aggregate);
}

// Run by one warp per tile, after publish_aggregate: publishes what later tiles need from this one
// (for a group's last tile, the group's total, then its prefix) and returns the tile's exclusive
// prefix.  The totals of the NearGroups groups before this one come from their tiles' aggregates,
// by the same warp scan their last tiles make, so the tile never waits for those tiles' own
// look-backs: a group's last tile publishes its total only once its warp gets to it, and that
// publication, then its reading, cost 2-3 us under a saturated memory system (globaltimer trace,
// H200).  Only the prefix from before them comes from the group state.
template <int NearGroups, class Op, class Acc>
__device__ Acc look_back(const TileState<Acc> &tiles, const TileState<Acc> &groups, const TileGroups &at,
                         Acc start, Acc block_total, Op op)
{
    static_assert(NearGroups >= 0 && NearGroups < 32, "a lane holds each near group's total");
    const int lane = threadIdx.x % warp_threads;
    const int near = at.g < NearGroups ? at.g : NearGroups;  // whole groups before this one in its row
    // Slot 0: tile `lane` of this group (before this tile); slot 1 + j: tile `lane` of the j-th group before.
    int64_t slot[1 + NearGroups];
    Acc read[1 + NearGroups];
#pragma unroll
    for (int j = 0; j <= NearGroups; ++j)
        slot[j] = static_cast<int64_t>(at.tile) - at.position - static_cast<int64_t>(j) * warp_threads + lane;
    tiles.wait_all(slot, (lane < at.position ? 1u : 0u) | (((1u << near) - 1u) << 1), read);
    Acc value = Op::template identity<Acc>();  // the group's aggregates up to this tile's, in lane order
    if (lane < at.position) value = read[0];
    if (lane == at.position) value = block_total;
    const Acc scanned = warp_inclusive_scan(value, op);
    // (Lanes are read from `scanned` where they are used: one value live across the wait, not two.)
    if (at.last) {
        const Acc total = __shfl_sync(full_mask, scanned, at.position);
        if (lane == 0) groups.publish(at.group, tile_aggregate, total);
    }
    Acc near_total = Op::template identity<Acc>();  // lane j: the total of the j-th group before
#pragma unroll
    for (int j = 0; j < NearGroups; ++j)
        if (j < near) {
            const Acc total = __shfl_sync(full_mask, warp_inclusive_scan(read[1 + j], op), warp_threads - 1);
            if (lane == j) near_total = total;
        }
    Acc before = at.g == near ? start : groups_prefix(groups, at.group - 1 - near, at.g - near, start, op);
    for (int j = near - 1; j >= 0; --j) before = op(before, __shfl_sync(full_mask, near_total, j));
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
                  int exclusive, ScanCarry<Op, Acc> carry, unsigned *non_finite)
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
    Acc thread_items[items];
    Tile::template visit<Op, Acc>(in_tile, warp_valid, [&](int i, Acc x) { thread_items[i] = x; });
    const Acc thread_total = thread_reduce<items>(op, [&](int i) { return thread_items[i]; });
    Acc block_total;
    const Acc thread_prefix = block_exclusive_scan<threads>(thread_total, op, scratch, block_total);

    if (threadIdx.x < warp_threads) {
        const TileGroups at = tile_groups(tile, tiles_per_row);
        if (threadIdx.x == 0) publish_aggregate(tiles, at, block_total);
        const Acc prefix = look_back<ScanTuning::near_groups>(tiles, groups, at, carry.start(row), block_total, op);
        if (threadIdx.x == 0) shared_prefix = prefix;
    }
    __syncthreads();
    const Acc tile_prefix_value = shared_prefix;

    if (t == tiles_per_row - 1 && threadIdx.x == 0) carry.finish(row, op(tile_prefix_value, block_total));
    Acc running = op(tile_prefix_value, thread_prefix);
    NonFiniteNote<Op, Out> note(non_finite);
    Tile::template transform<Op, Acc>(in_tile, out_tile, warp_valid, [&](Acc x) {
        const Acc before = running;
        running = op(running, x);
        const Out value = convert<Out>(exclusive ? numpy_sum<Op>(before) : running);
        note.look(value);
        return value;
    });
    Tile::flush(out + warp_offset, warp_valid, out_tile);
    note.flush();
}

// ---- the pipelined tile scan (sm_90 and later: bulk copies and transaction barriers) ----------------
//
// A persistent block per SM takes tiles in index order from a counter and moves each through a ring
// of shared-memory stages; every stage has four barriers, one per hand-over:
//   loader warp    claims a tile, bulk-copies it in (cp.async.bulk)           -> loaded
//   reduce squad   the tile's aggregate (published at once), segment prefixes -> reduced
//   look-back warp the tile's exclusive prefix (look_back, in the fixed order) -> prefixed
//   scan squad     the tile's outputs, straight from registers to global      -> free (to the loader)
// The look-back warps take turns (ring position j goes to warp j % look_back_warps), so several tiles wait for
// their predecessors at once while the loader keeps the ring full.  Tiles are claimed in index order
// by running blocks only, so every predecessor of a tile is held by a running block and needs
// nothing later to finish.  When the counter runs out, the loader sends one end marker per look-back
// warp through the ring.
struct StageBarriers {
    uint64_t loaded, reduced, prefixed, free;
};

template <class Acc> struct StageInfo {
    int tile;        // the tile in the stage; -1 marks the end of the work
    int shift;       // bytes from the stage's start to the tile's first element (its address mod 16)
    Acc aggregate;   // reduce squad -> look-back warp
    Acc prefix;      // look-back warp -> scan squad: the tile's exclusive prefix
    Acc segment_prefix[ScanPipelineTuning::segments];  // reduce -> scan squad: each segment's within the tile
};

// Where a tile lies: its row, its place in the row and its valid elements.
struct TileSpan {
    int64_t row, t, offset, valid;
    __device__ TileSpan(int64_t tile, int64_t tiles_per_row, int64_t n, int64_t tile_items)
        : row(tile / tiles_per_row), t(tile - row * tiles_per_row), offset(row * n + t * tile_items),
          valid(n - t * tile_items < tile_items ? n - t * tile_items : tile_items)
    {
    }
};

// The kernel's device helpers, compiled only where the kernel has a body (sm_90 and later).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ void wait_stage(uint64_t *barrier, unsigned parity)
{
    while (!cuda::ptx::mbarrier_try_wait_parity(barrier, parity)) {
    }
}

__device__ __forceinline__ void arrive_stage(uint64_t *barrier) { (void)cuda::ptx::mbarrier_arrive(barrier); }

// A barrier among the `threads` threads of one squad (ids above 0: __syncthreads uses 0).
__device__ __forceinline__ void squad_sync(int id, int threads)
{
    asm volatile("bar.sync %0, %1;" : : "r"(id), "r"(threads) : "memory");
}

// Stage s of ring pass `pass` completes barrier phase pass % 2; a consumer waits for that parity.
struct RingPosition {
    int stage = 0;
    unsigned parity = 0;
    __device__ void advance(int stages)
    {
        if (++stage == stages) {
            stage = 0;
            parity ^= 1u;
        }
    }
};
#endif

// The E elements of a lane (a 16-byte vector of the wider type) as raw storage of one access.
template <class T, int E> struct alignas(E * sizeof(T)) LaneVector {
    T v[E];
};

template <class Op, class In, class Acc, class Out>
__global__ void __launch_bounds__(ScanPipelineTuning::threads, 1)
scan_pipeline_kernel(const In *in, Out *out, int64_t n, int64_t tiles_per_row, int tiles, int stages,
                     int64_t stage_bytes, TileState<Acc> tile_state, TileState<Acc> group_state, int *tile_counter,
                     int exclusive, ScanCarry<Op, Acc> carry, unsigned *non_finite)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    using Tuning = ScanPipelineTuning;
    constexpr int E = Tuning::lane_items<In, Out>;
    constexpr int64_t tile_items = Tuning::tile_items<In, Out>;
    constexpr int first_reduce_warp = 1 + Tuning::look_back_warps;
    constexpr int first_scan_warp = first_reduce_warp + Tuning::reduce_warps;
    using Lane = cuda::std::conditional_t<widened_product<Op, Out>, Out, Acc>;  // the scan squad's row folds
    extern __shared__ __align__(128) unsigned char ring[];
    StageBarriers *barriers = reinterpret_cast<StageBarriers *>(ring);
    StageInfo<Acc> *infos = reinterpret_cast<StageInfo<Acc> *>(barriers + stages);
    unsigned char *data = ring + (reinterpret_cast<unsigned char *>(infos + stages) - ring + 127) / 128 * 128;
    const Op op;
    const int warp = threadIdx.x / warp_threads, lane = threadIdx.x % warp_threads;

    if (threadIdx.x == 0) {
        for (int s = 0; s < stages; ++s) {
            // Every thread that touched a stage arrives (an arrival releases only its own thread's
            // accesses), except the reduce squad's, whose bar.sync orders them before its one arrival.
            cuda::ptx::mbarrier_init(&barriers[s].loaded, warp_threads);
            cuda::ptx::mbarrier_init(&barriers[s].reduced, 1);
            cuda::ptx::mbarrier_init(&barriers[s].prefixed, warp_threads);
            cuda::ptx::mbarrier_init(&barriers[s].free, Tuning::segments * warp_threads);
        }
        cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
    }
    __syncthreads();

    RingPosition at;
    if (warp == 0) {  // loader
        // A stage's next tile is claimed once the tile in it has its prefix: the claim's round trip
        // overlaps that tile's scan, and the claimed tile waits only that long for the stage.  Claimed
        // one stage ahead instead, a tile waited a whole stage turn (2.8 us, globaltimer trace, H200)
        // while its successors, claimed by other blocks, loaded at once, and they waited on it.  (A
        // claimed tile waiting for a stage still has every predecessor on its way: the stage holds an
        // earlier tile.)
        bool counter_done = false;
        for (int ends = 0; ends < Tuning::look_back_warps; at.advance(stages)) {
            int tile = -1;
            if (!counter_done) {
                wait_stage(&barriers[at.stage].prefixed, at.parity ^ 1u);  // a fresh stage passes at once
                tile = __shfl_sync(full_mask, lane == 0 ? atomicAdd(tile_counter, 1) : 0, 0);
                counter_done = tile >= tiles;
                if (counter_done) tile = -1;
            }
            wait_stage(&barriers[at.stage].free, at.parity ^ 1u);
            StageInfo<Acc> &info = infos[at.stage];
            if (tile < 0) {
                if (lane == 0) info.tile = -1;
                arrive_stage(&barriers[at.stage].loaded);
                ++ends;
                continue;
            }
            const TileSpan span(tile, tiles_per_row, n, tile_items);
            const In *src = in + span.offset;
            const int shift = static_cast<int>(reinterpret_cast<uintptr_t>(src) % 16);
            unsigned char *stage = data + at.stage * stage_bytes;
            In *elements = reinterpret_cast<In *>(stage + shift);
            // Bytes before src's first 16-byte boundary and past its last one go by plain loads; the
            // rest, 16-byte aligned on both sides (stage + shift + head is), as one bulk copy.
            const int64_t bytes = span.valid * static_cast<int64_t>(sizeof(In));
            const int64_t head = (16 - shift) % 16 < bytes ? (16 - shift) % 16 : bytes;
            const int64_t bulk = (bytes - head) / 16 * 16;
            const int64_t head_items = head / static_cast<int64_t>(sizeof(In));
            for (int64_t i = lane; i < head_items; i += warp_threads) elements[i] = src[i];
            for (int64_t i = (head + bulk) / static_cast<int64_t>(sizeof(In)) + lane; i < span.valid; i += warp_threads)
                elements[i] = src[i];
            if (lane == 0) {
                info.tile = tile;
                info.shift = shift;
            }
            if (lane != 0) {
                arrive_stage(&barriers[at.stage].loaded);
            } else {
                if (bulk > 0) {
                    // Orders this stage's earlier generic-proxy accesses before the copy's async-proxy writes.
                    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
                    (void)cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                                               cuda::ptx::space_shared, &barriers[at.stage].loaded,
                                                               static_cast<uint32_t>(bulk));
                    cuda::ptx::cp_async_bulk(cuda::ptx::space_cluster, cuda::ptx::space_global, stage + shift + head,
                                             reinterpret_cast<const unsigned char *>(src) + head,
                                             static_cast<uint32_t>(bulk), &barriers[at.stage].loaded);
                } else {
                    arrive_stage(&barriers[at.stage].loaded);
                }
            }
        }
        return;
    }

    // The squads' view of a stage: segment g is vectors of E elements, vector v the elements from
    // g * segment_items + v * E.  The scan squad's lane `lane` reads, in row r, vector r * 32 + lane;
    // the reduce squad's lane reads its rows vectors from lane * rows on, consecutive elements, so
    // that its fold and the warp's reduction keep the elements' order (a min's or max's tie goes to
    // the right element).  Lanes 9 vectors apart (144 bytes of 16-byte vectors) still read distinct
    // banks.  A full tile (every element valid, 16-byte aligned in shared and global memory) is read
    // and written as whole vectors, with no test per row, so the rows' loads and warp scans overlap;
    // other tiles test each element.
    using InVector = LaneVector<In, E>;
    using OutVector = LaneVector<Out, E>;
    const auto read_vector = [&](const In *segment, int v, int64_t valid, bool full, auto *values) {
        using Value = cuda::std::remove_reference_t<decltype(*values)>;
        const int64_t first = static_cast<int64_t>(v) * E;
        if (full) {
            const InVector packed = reinterpret_cast<const InVector *>(segment)[v];
#pragma unroll
            for (int e = 0; e < E; ++e) values[e] = operand<Value, Op>(packed.v[e]);
        } else {
#pragma unroll
            for (int e = 0; e < E; ++e)
                values[e] = first + e < valid ? operand<Value, Op>(segment[first + e]) : Op::template identity<Value>();
        }
    };
    const auto stage_span = [&](const StageInfo<Acc> &info, int g, int64_t &valid) {
        const TileSpan span(info.tile, tiles_per_row, n, tile_items);
        valid = span.valid - g * Tuning::segment_items<In, Out>;  // of segment g (may be <= 0)
        return span;
    };

    if (warp >= first_reduce_warp && warp < first_scan_warp) {  // reduce squad
        constexpr int per_warp = Tuning::segments / Tuning::reduce_warps;
        const int w = warp - first_reduce_warp;
        for (int ends = 0; ends < Tuning::look_back_warps; at.advance(stages)) {
            wait_stage(&barriers[at.stage].loaded, at.parity);
            StageInfo<Acc> &info = infos[at.stage];
            if (info.tile < 0) {
                if (w == 0 && lane == 0) arrive_stage(&barriers[at.stage].reduced);
                ++ends;
                continue;
            }
            const In *elements = reinterpret_cast<const In *>(data + at.stage * stage_bytes + info.shift);
#pragma unroll
            for (int h = 0; h < per_warp; ++h) {
                const int g = w * per_warp + h;
                int64_t valid;
                const TileSpan span = stage_span(info, g, valid);
                const bool full = info.shift == 0 && span.valid == tile_items;
                Acc values[Tuning::rows][E];
#pragma unroll
                for (int r = 0; r < Tuning::rows; ++r)
                    read_vector(elements + g * Tuning::segment_items<In, Out>, lane * Tuning::rows + r, valid, full,
                                values[r]);
                const Acc partial = thread_reduce<Tuning::rows * E>(op, [&](int i) { return values[i / E][i % E]; });
                const Acc total = warp_reduce(partial, op);
                if (lane == 0) info.segment_prefix[g] = total;
            }
            squad_sync(1, Tuning::reduce_warps * warp_threads);
            if (w == 0 && lane == 0) {
                Acc running = Op::template identity<Acc>();
                for (int g = 0; g < Tuning::segments; ++g) {
                    const Acc total = info.segment_prefix[g];
                    info.segment_prefix[g] = running;
                    running = op(running, total);
                }
                info.aggregate = running;
                publish_aggregate(tile_state, tile_groups(info.tile, tiles_per_row), running);
                arrive_stage(&barriers[at.stage].reduced);
            }
        }
        return;
    }

    if (warp >= first_scan_warp) {  // scan squad: warp g scans segment g
        const int g = warp - first_scan_warp;
        NonFiniteNote<Op, Out> note(non_finite);
        for (;; at.advance(stages)) {
            wait_stage(&barriers[at.stage].prefixed, at.parity);
            const StageInfo<Acc> &info = infos[at.stage];
            if (info.tile < 0) {
                note.flush();
                return;
            }
            int64_t valid;
            const TileSpan span = stage_span(info, g, valid);
            const In *segment =
                reinterpret_cast<const In *>(data + at.stage * stage_bytes + info.shift) + g * Tuning::segment_items<In, Out>;
            Out *dst = out + span.offset + g * Tuning::segment_items<In, Out>;
            const bool full = info.shift == 0 && span.valid == tile_items &&
                              reinterpret_cast<uintptr_t>(out + span.offset) % sizeof(OutVector) == 0;
            Lane values[Tuning::rows][E], inclusive[Tuning::rows];
#pragma unroll
            for (int r = 0; r < Tuning::rows; ++r) {
                read_vector(segment, r * warp_threads + lane, valid, full, values[r]);
#pragma unroll
                for (int e = 1; e < E; ++e) values[r][e] = op(values[r][e - 1], values[r][e]);
            }
#pragma unroll
            for (int r = 0; r < Tuning::rows; ++r) inclusive[r] = warp_inclusive_scan(values[r][E - 1], op);
            Acc running = op(info.prefix, info.segment_prefix[g]);
#pragma unroll
            for (int r = 0; r < Tuning::rows; ++r) {
                Lane lane_prefix = __shfl_up_sync(full_mask, inclusive[r], 1);
                if (lane == 0) lane_prefix = Op::template identity<Lane>();
                const Acc before = op(running, static_cast<Acc>(lane_prefix));
                OutVector results;
#pragma unroll
                for (int e = 0; e < E; ++e) {
                    results.v[e] = convert<Out>(
                        exclusive ? numpy_sum<Op>(e == 0 ? before : op(before, static_cast<Acc>(values[r][e - 1])))
                                  : op(before, static_cast<Acc>(values[r][e])));
                    note.look(results.v[e]);  // lanes past the valid ones repeat a valid output
                }
                const int64_t first = (static_cast<int64_t>(r) * warp_threads + lane) * E;
                if (full) {
                    reinterpret_cast<OutVector *>(dst)[r * warp_threads + lane] = results;
                } else {
#pragma unroll
                    for (int e = 0; e < E; ++e)
                        if (first + e < valid) dst[first + e] = results.v[e];
                }
                running = op(running, static_cast<Acc>(__shfl_sync(full_mask, inclusive[r], warp_threads - 1)));
            }
            arrive_stage(&barriers[at.stage].free);
        }
    }

    // look-back warps: warp k takes ring positions k, k + look_back_warps, ...
    const int k = warp - 1;
    for (int j = k;; j += Tuning::look_back_warps) {
        const int stage = j % stages;
        wait_stage(&barriers[stage].reduced, static_cast<unsigned>(j / stages) & 1u);
        StageInfo<Acc> &info = infos[stage];
        const int tile = info.tile;
        if (tile >= 0) {
            const TileSpan span(tile, tiles_per_row, n, tile_items);
            const Acc prefix =
                look_back<Tuning::near_groups>(tile_state, group_state, tile_groups(tile, tiles_per_row), carry.start(span.row),
                                               info.aggregate, op);
            if (lane == 0) {
                info.prefix = prefix;
                if (span.t == tiles_per_row - 1) carry.finish(span.row, op(prefix, info.aggregate));
            }
        }
        arrive_stage(&barriers[stage].prefixed);
        if (tile < 0) return;
    }
#else
    (void)in, (void)out, (void)n, (void)tiles_per_row, (void)tiles, (void)stages, (void)stage_bytes;
    (void)tile_state, (void)group_state, (void)tile_counter, (void)exclusive, (void)carry, (void)non_finite;
#endif
}

// Rows shorter than a tile: a logical warp of `width` lanes per row, each lane `items` consecutive
// elements per step, carrying the running total from step to step.
template <class Op, class In, class Acc, class Out>
__global__ void __launch_bounds__(ReduceTuning::threads)
scan_short_rows_kernel(const In *in, Out *out, int64_t rows, int64_t n, int width, int exclusive,
                       ScanCarry<Op, Acc> row_carry, unsigned *non_finite)
{
    constexpr int items = ScanTuning::short_row_items;
    const Op op;
    const LogicalWarpRows assigned(width);
    const int lane = assigned.lane;
    NonFiniteNote<Op, Out> note(non_finite);
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
                if (active && first + i < n) {
                    dst[first + i] = convert<Out>(exclusive ? numpy_sum<Op>(i == 0 ? before : op(before, values[i - 1]))
                                                            : op(before, values[i]));
                    note.look(dst[first + i]);
                }
            carry = op(carry, __shfl_sync(full_mask, inclusive, width - 1, width));
        }
        if (active && lane == 0) row_carry.finish(row, carry);
    }
    note.flush();
}

// inner > 1: a thread per column walks its chunk with stride `inner` (coalesced across the warp),
// starting from carry[(o * chunks + chunk) * inner + i] when carry is given; the last chunk leaves
// the column's total in totals[o * inner + i] when totals is given.  in may equal out.  Carries:
// the outputs are other chunks' carries, kept as the operator made them (not as NumPy shows them).
template <class Op, class In, class Acc, class Out, bool Carries = false>
__global__ void __launch_bounds__(ReduceTuning::threads)
scan_columns_kernel(const In *in, Out *out, int64_t outer, int64_t n, int64_t inner, int64_t chunk,
                    const Acc *carry, int exclusive, Acc *totals, unsigned *non_finite)
{
    const Op op;
    NonFiniteNote<Op, Out> note(non_finite);
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
            Out value;
            if (exclusive) {
                value = convert<Out>(Carries ? running : numpy_sum<Op>(running));
                running = op(running, x);
            } else {
                running = op(running, x);
                value = convert<Out>(running);
            }
            out[base + k * inner] = value;
            note.look(value);
        }
        if (totals && blockIdx.y == gridDim.y - 1) totals[column] = running;
    }
    note.flush();
}

template <class Op, class In, class Acc, class Out>
int scan_rows(int device, const In *in, Out *out, int64_t rows, int64_t n, int exclusive,
                     ScanCarry<Op, Acc> carry, unsigned *non_finite, gp_error *err)
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
                                                   0, stream>>>(in, out, rows, n, width, exclusive, carry,
                                                                non_finite);
        GP_CHECK_LAUNCH(err, "scan_short_rows_kernel");
        return 0;
    }

    // Hopper and later run the pipelined kernel on long rows, where a ring of its minimum stages fits.
    using Pipeline = ScanPipelineTuning;
    const int64_t stage_bytes = round_up(Pipeline::tile_items<In, Out> * static_cast<int64_t>(sizeof(In)) + 16, 128);
    const auto ring_header = [](int64_t stages) {  // the stages' barriers and infos, as the kernel lays them out
        return round_up(static_cast<int64_t>(sizeof(StageBarriers) + sizeof(StageInfo<Acc>)) * stages, 128);
    };
    const int64_t fit = (max_dynamic_shared_bytes(device) - ring_header(Pipeline::max_stages)) / stage_bytes;
    const int stages = static_cast<int>(fit < Pipeline::max_stages ? fit : Pipeline::max_stages);
    const int64_t pipeline_tiles = rows * ceil_div(n, Pipeline::tile_items<In, Out>);
    const bool pipelined = compute_capability_major(device) >= 9 && stages >= Pipeline::min_stages &&
                           pipeline_tiles >= static_cast<int64_t>(Pipeline::min_ring_fills) * stages *
                                                 multiprocessor_count(device);
    const int64_t tiles_per_row = ceil_div(n, pipelined ? Pipeline::tile_items<In, Out> : tile_items);
    const int64_t tiles = rows * tiles_per_row;
    if (tiles > LaunchLimits::max_grid_x) return fail(err, GP_ERR_INVALID, "array too large for one scan launch");
    // Workspace: the tile counter (pipelined kernel), the status of every tile, then of every group of
    // 32 tiles, all zero (tile_invalid) at launch; each part starts on a 16-byte boundary.
    const int64_t groups = rows * ceil_div(tiles_per_row, static_cast<int64_t>(warp_threads));
    constexpr size_t counter_bytes = 16;
    const size_t tile_bytes = (TileState<Acc>::bytes_per_tile() * tiles + 15) / 16 * 16;
    const size_t bytes = counter_bytes + tile_bytes + TileState<Acc>::bytes_per_tile() * groups;
    DeviceBuffer workspace;
    if (workspace.allocate(bytes, err)) return -1;
    TileState<Acc> tile_state, group_state;
    tile_state.bind(workspace.as<char>() + counter_bytes);
    group_state.bind(workspace.as<char>() + counter_bytes + tile_bytes);
    GP_CUDA_TRY(cudaMemsetAsync(workspace.as<void>(), 0, bytes, stream), err, "cudaMemsetAsync");
    if (pipelined) {
        const auto kernel = scan_pipeline_kernel<Op, In, Acc, Out>;
        const size_t shared = static_cast<size_t>(ring_header(stages) + stages * stage_bytes);
        unsigned blocks = 0;
        if (launch_persistent(device, kernel, dim3(Pipeline::threads), shared, tiles, err, blocks)) return -1;
        kernel<<<blocks, Pipeline::threads, shared, stream>>>(in, out, n, tiles_per_row, static_cast<int>(tiles),
                                                              stages, stage_bytes, tile_state, group_state,
                                                              workspace.as<int>(), exclusive, carry, non_finite);
        GP_CHECK_LAUNCH(err, "scan_pipeline_kernel");
        return 0;
    }
    scan_tiles_kernel<Op, In, Acc, Out><<<static_cast<unsigned>(tiles), threads, 0, stream>>>(
        in, out, n, tiles_per_row, tile_state, group_state, exclusive, carry, non_finite);
    GP_CHECK_LAUNCH(err, "scan_tiles_kernel");
    return 0;
}

template <class Op, class In, class Acc, class Out>
int scan_columns(int device, const In *in, Out *out, int64_t outer, int64_t n, int64_t inner,
                        int exclusive, ScanCarry<Op, Acc> carry, unsigned *non_finite, gp_error *err)
{
    constexpr int threads = ReduceTuning::threads;
    const cudaStream_t stream = work_stream();
    const ColumnGrid geometry =
        column_grid(device, resident_blocks_per_sm(device, scan_columns_kernel<Op, In, Acc, Out>), outer, n, inner);
    if (geometry.chunks == 1) {
        scan_columns_kernel<Op, In, Acc, Out><<<geometry.grid, threads, 0, stream>>>(
            in, out, outer, n, inner, n, carry.in, exclusive, carry.out, non_finite);
        GP_CHECK_LAUNCH(err, "scan_columns_kernel");
        return 0;
    }
    // Chunk totals, their exclusive scan along the chunks (in place), then each chunk from its carry.
    // A streamed call's carry seeds the scan of the totals, which also yields the new carry.  The
    // totals are partials: an IgnoreNan operator combines them as its plain one.
    using PartialOp = typename plain_operator<Op>::type;
    DeviceBuffer chunk_carry;
    if (chunk_carry.allocate(sizeof(Acc) * outer * geometry.chunks * inner, err)) return -1;
    reduce_columns_kernel<Op, In, Acc, Acc, true><<<geometry.grid, threads, 0, stream>>>(
        in, chunk_carry.as<Acc>(), outer, n, inner, geometry.chunk);
    GP_CHECK_LAUNCH(err, "reduce_columns_kernel");
    scan_columns_kernel<PartialOp, Acc, Acc, Acc, true><<<dim3(geometry.grid.x, 1), threads, 0, stream>>>(
        chunk_carry.as<Acc>(), chunk_carry.as<Acc>(), outer, geometry.chunks, inner, geometry.chunks,
        carry.in, 1, carry.out, nullptr);
    GP_CHECK_LAUNCH(err, "scan_columns_kernel");
    scan_columns_kernel<Op, In, Acc, Out><<<geometry.grid, threads, 0, stream>>>(
        in, out, outer, n, inner, geometry.chunk, chunk_carry.as<const Acc>(), exclusive, nullptr, non_finite);
    GP_CHECK_LAUNCH(err, "scan_columns_kernel");
    return 0;
}

// A scan with its types fixed: rows (inner == 1) or columns.
template <class Op, class In, class Acc, class Out>
int scan_typed(int device, const gp_scan_args &args, const void *in, void *out, const void *carry_in, void *carry_out,
               unsigned *non_finite, gp_error *err)
{
    const In *typed_in = static_cast<const In *>(in);
    Out *typed_out = static_cast<Out *>(out);
    const ScanCarry<Op, Acc> carry{static_cast<const Acc *>(carry_in), static_cast<Acc *>(carry_out)};
    if (args.inner == 1)
        return scan_rows<Op, In, Acc, Out>(device, typed_in, typed_out, args.outer, args.n, args.exclusive, carry,
                                           non_finite, err);
    return scan_columns<Op, In, Acc, Out>(device, typed_in, typed_out, args.outer, args.n, args.inner, args.exclusive,
                                          carry, non_finite, err);
}

// Calls f(type_tag<Op>{}, type_tag<Acc>{}, type_tag<Out>{}) with the operator and the types of the
// scan `args` of In: sums and products by the accumulator rule (dispatch_accumulator), float32
// products in double (widened_product: a tile's tree of float32 products drifts; float16 results keep
// float32, 2^13 times finer than their ulp, where double spilled 1 KB in the pipelined kernel),
// NaN-skipping for float inputs with skip_nan; min and max in minmax_accumulator<In>, the input's
// dtype out (float16's with its own rule for ties, HalfMinOp and HalfMaxOp).
template <class In, class F> int dispatch_scan_types(const gp_scan_args &args, gp_error *err, F &&f)
{
    const auto accumulate = [&](auto op_tag) {
        using Op = typename decltype(op_tag)::type;
        return dispatch_accumulator<In>(args.out_dtype, err, [&](auto rule_acc_tag, auto out_tag) {
            using RuleAcc = typename decltype(rule_acc_tag)::type;
            using Out = typename decltype(out_tag)::type;
            using Acc = cuda::std::conditional_t<widened_product<Op, Out>, widened_float<RuleAcc>, RuleAcc>;
            if constexpr (cuda::std::is_floating_point_v<In> || cuda::std::is_same_v<In, __half>)
                if (args.skip_nan) return f(type_tag<IgnoreNan<Op>>{}, type_tag<Acc>{}, out_tag);
            return f(op_tag, type_tag<Acc>{}, out_tag);
        });
    };
    using CompareAcc = type_tag<typename minmax_accumulator<In>::type>;
    constexpr bool half = cuda::std::is_same_v<In, __half>;
    using Min = cuda::std::conditional_t<half, HalfMinOp, MinOp>;
    using Max = cuda::std::conditional_t<half, HalfMaxOp, MaxOp>;
    switch (args.op) {
    case GP_SUM: return accumulate(type_tag<ScanSumOp>{});
    case GP_PROD: return accumulate(type_tag<ProdOp>{});
    case GP_MIN: return f(type_tag<Min>{}, CompareAcc{}, type_tag<In>{});
    case GP_MAX: return f(type_tag<Max>{}, CompareAcc{}, type_tag<In>{});
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
                void *carry_out, unsigned *non_finite, gp_error *err)
{
    return dispatch_scan(args, err, [&](auto in_tag, auto op_tag, auto acc_tag, auto out_tag) {
        return scan_typed<typename decltype(op_tag)::type, typename decltype(in_tag)::type,
                          typename decltype(acc_tag)::type, typename decltype(out_tag)::type>(
            device, args, in, out, carry_in, carry_out, non_finite, err);
    });
}

int NonFiniteFlag::start(const gp_scan_args &args, gp_error *err)
{
    if (args.non_finite == nullptr) return 0;
    if (word_.allocate(sizeof(unsigned), err)) return -1;
    GP_CUDA_TRY(cudaMemsetAsync(word_.as<void>(), 0, sizeof(unsigned), work_stream()), err, "cudaMemsetAsync");
    return 0;
}

int NonFiniteFlag::report(const gp_scan_args &args, gp_error *err) const
{
    if (args.non_finite == nullptr) return 0;
    static_assert(sizeof(unsigned) == sizeof(int), "the flag is copied into the host's int");
    // Into pageable host memory, so the copy returns once the word, after the kernels, is there.
    GP_CUDA_TRY(cudaMemcpyAsync(args.non_finite, word_.as<void>(), sizeof(unsigned), cudaMemcpyDeviceToHost,
                                work_stream()),
                err, "copy the non-finite flag to the host");
    return 0;
}

int upload_initial(const gp_scan_args &args, DeviceBuffer *carries, gp_error *err)
{
    return dispatch_scan(args, err, [&](auto, auto, auto acc_tag, auto) {
        using Acc = typename decltype(acc_tag)::type;
        const int64_t rows = args.outer * args.inner;
        std::unique_ptr<Acc[]> converted(new (std::nothrow) Acc[rows]);
        if (!converted) return fail(err, GP_ERR_NOMEM, "out of host memory converting the initial values");
        for (int64_t row = 0; row < rows; ++row) {
            if constexpr (cuda::std::is_floating_point_v<Acc>)
                converted[row] = convert<Acc>(static_cast<const double *>(args.initial)[row]);
            else
                converted[row] = convert<Acc>(static_cast<const uint64_t *>(args.initial)[row]);
        }
        if (carries->allocate(sizeof(Acc) * rows, err)) return -1;
        // From pageable memory this returns once the source has been staged, so `converted` may go.
        GP_CUDA_TRY(cudaMemcpyAsync(carries->as<void>(), converted.get(), sizeof(Acc) * rows,
                                    cudaMemcpyHostToDevice, work_stream()),
                    err, "copy the initial values to the device");
        return 0;
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
    DeviceBuffer initial;
    NonFiniteFlag flag;
    if ((call.scan.initial != nullptr && upload_initial(call.scan, &initial, err)) || flag.start(call.scan, err) ||
        launch_scan(device, call.scan, call.in, call.out, initial.as<const void>(), nullptr, flag.word(), err))
        return -1;
    return flag.report(call.scan, err);
}

}  // namespace gp
