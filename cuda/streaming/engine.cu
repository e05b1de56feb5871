// The streaming engine: reduce, scan, convolution and transpose of host arrays at the speed of the
// bus, never holding the whole array on the GPU.
//
// For reduce and scan, the (outer, n, inner) array is cut into tiles: whole outer slabs when one fits in a chunk, else
// runs of rows of one slab (a block of columns when a row is too long), walked slab by slab, column
// block by column block, along n.  Each tile goes
//   host array --(copy threads)--> pinned slot --(H2D stream)--> device slot --(work stream:
//   the resident kernels)--> device out slot --(D2H stream)--> pinned out slot --(copy threads)-->
//   host result
// through a ring of StreamTuning::slots slots, with events ordering the three streams, so copy in,
// compute and copy out of different tiles overlap.  One host thread cannot copy pageable memory
// as fast as the bus moves it, so a pool of copy threads shares every staging copy.  Pinned
// (page-locked) host arrays skip their staging copy: the DMA reads or writes them directly.
//
// A reduction that splits a slab along n keeps the running result of each column on the device;
// a scan carries each column's running total from one tile to the next (scan_resident_carried).
// Convolution streams tiles of result rows, or blocks of rows by columns, whose input carries the
// mask's halo (stream_correlate); transpose streams blocks of the output cut along the two
// dimensions of largest source stride, read and written back as strided copies
// (stream_copy_strided).
//
// Pinned slots, streams and events are allocated once per device and reused; the device slots
// come from gpuprims' caching pool per call.  One streamed call runs per device at a time (the
// bus is the bottleneck; a second caller waits), and every call returns with its copies and
// kernels done, also after a failure (only the slots' stream-ordered release may be pending).
#include <algorithm>
#include <climits>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "common.cuh"
#include "copy_layout.h"
#include "pipeline.cuh"

namespace gp {

// Tuning constants of the streaming engine.
struct StreamTuning {
    static constexpr int slots = 4;                        // tiles in flight
    static constexpr size_t chunk_bytes = size_t(8) << 20;  // input bytes per tile
    // A streamed array is cut into at least this many tiles, so that copies in, compute and copies
    // out overlap also for arrays of one or two chunks (H200, convolve of 8 MiB: 0.85 ms in one
    // tile, 0.54 ms in smaller ones).
    static constexpr int64_t min_tiles = 4;
    // Inputs from these sizes stream; smaller ones take the short path (one copy each way).  H200,
    // float32 from pageable memory, short path vs streamed (streamed results are pinned), ms:
    //   sum          8 MiB 0.52 vs 0.58,  16 MiB 0.98 vs 1.21,  32 MiB 1.89 vs 1.30;
    //   prefix_sum   2 MiB 0.31 vs 0.22,   4 MiB 0.54 vs 0.30;
    //   convolve     2 MiB 0.33 vs 0.24 (7 taps);  convolve2d 2 MiB 0.32 vs 0.22 (5 x 5);
    //   transpose    2 MiB 0.30 vs 0.27,   4 MiB 0.52 vs 0.29.
    // (2 MiB is the smallest size measured.)  Indexed by gp_streamed_op.
    static constexpr size_t min_stream_bytes[] = {size_t(32) << 20, size_t(2) << 20, size_t(2) << 20,
                                                  size_t(2) << 20};
    static constexpr int max_copy_threads = 8;  // one host thread copies pageable memory at ~10 GB/s
    static constexpr size_t bytes_per_copy_part = size_t(512) << 10;  // smaller copies use fewer threads
    // A tile that cuts columns covers at least this many rows, so the running results of its
    // columns (4 accumulators each) take at most chunk elements' bytes.
    static constexpr int64_t min_rows_per_column_tile = 32;
    // Device bytes per element of a tile beyond the slots: carries and kernel workspace.
    static constexpr int64_t workspace_bytes_per_element = 2;
    // Streamed results from min_pinned_result_bytes to pinned_cache_bytes go to cached pinned
    // blocks, which the cache keeps up to pinned_cache_bytes of when their arrays die.  Larger
    // results are pageable: pinning a fresh 2 GiB block took 0.8 s on the H200 machine, ten times
    // the streamed call.
    static constexpr size_t min_pinned_result_bytes = size_t(1) << 20;
    static constexpr size_t pinned_cache_bytes = size_t(1) << 30;
    static constexpr size_t pinned_block_granularity = size_t(2) << 20;
    static constexpr int64_t slot_alignment = 256;  // device slots start where vectorized loads may
};

// ---- settings -----------------------------------------------------------------------------------

// A non-negative integer environment variable, or `fallback` when unset or unreadable.
static long long env_integer(const char *name, long long fallback)
{
    const char *text = std::getenv(name);
    if (text == nullptr || *text == '\0') return fallback;
    char *end = nullptr;
    const long long value = std::strtoll(text, &end, 10);
    return (*end == '\0' && value >= 0) ? value : fallback;
}

// The settings of one call, read from the environment each time (tests change them):
//   GPUPRIMS_MAX_DEVICE_BYTES    device memory a host call may use (default: unlimited);
//   GPUPRIMS_STREAM_CHUNK_BYTES  input bytes per tile (default StreamTuning::chunk_bytes);
//   GPUPRIMS_STREAM_MIN_BYTES    the short path / streaming crossover;
//   GPUPRIMS_STREAM_FAIL_TILE    test hook: the streamed call fails at this tile (RuntimeError).
// GPUPRIMS_COPY_THREADS (host copy threads, default StreamTuning::max_copy_threads) is read once.
struct StreamSettings {
    size_t max_device_bytes, chunk_bytes, min_stream_bytes;
    long long fail_tile;

    static StreamSettings current(gp_streamed_op op = GP_STREAMED_REDUCE)
    {
        const size_t min_stream_bytes = StreamTuning::min_stream_bytes[op];
        return {static_cast<size_t>(env_integer("GPUPRIMS_MAX_DEVICE_BYTES", LLONG_MAX)),
                static_cast<size_t>(std::max(1LL, env_integer("GPUPRIMS_STREAM_CHUNK_BYTES",
                                                              StreamTuning::chunk_bytes))),
                static_cast<size_t>(env_integer("GPUPRIMS_STREAM_MIN_BYTES", min_stream_bytes)),
                env_integer("GPUPRIMS_STREAM_FAIL_TILE", -1)};
    }
};

bool should_stream(gp_streamed_op op, size_t in_bytes, size_t out_bytes, int64_t count)
{
    const StreamSettings settings = StreamSettings::current(op);
    const size_t short_path_bytes =
        in_bytes + out_bytes + static_cast<size_t>(count) * StreamTuning::workspace_bytes_per_element;
    return in_bytes >= settings.min_stream_bytes || short_path_bytes > settings.max_device_bytes;
}

// ---- host copy threads --------------------------------------------------------------------------

// A fixed pool of threads that share each staging copy.  Created on first use and never destroyed
// (its threads sleep between jobs).
class CopyThreads {
  public:
    static CopyThreads &instance()
    {
        static CopyThreads *pool = new CopyThreads();
        return *pool;
    }
    int parts() const { return static_cast<int>(workers_.size()); }

    // Starts job(part) for every part < parts on the threads (a single part runs at once on the
    // caller); finish() waits for them.  One job at a time: start waits for another caller's.
    void start(int parts, std::function<void(int)> job)
    {
        parts = std::max(1, std::min(parts, this->parts()));
        busy_.lock();  // released by finish()
        if (parts == 1) {
            job(0);
            return;
        }
        {
            std::lock_guard<std::mutex> lock(mutex_);
            job_ = std::move(job);
            parts_ = parts;
            remaining_ = parts;
            ++generation_;
        }
        wake_.notify_all();
    }

    void finish()
    {
        {
            std::unique_lock<std::mutex> lock(mutex_);
            done_.wait(lock, [this] { return remaining_ == 0; });
        }
        busy_.unlock();
    }

  private:
    CopyThreads()
    {
        const unsigned hardware = std::thread::hardware_concurrency();
        const long long wanted = env_integer("GPUPRIMS_COPY_THREADS", StreamTuning::max_copy_threads);
        const int threads = static_cast<int>(std::max(1LL, std::min<long long>(wanted, hardware > 1 ? hardware : 1)));
        for (int part = 0; part < threads; ++part) workers_.emplace_back([this, part] { work(part); });
    }

    void work(int part)
    {
        unsigned long long seen = 0;
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            wake_.wait(lock, [&] { return generation_ != seen; });
            seen = generation_;
            if (part >= parts_) continue;
            lock.unlock();
            job_(part);  // job_ changes only once every part of it is done
            lock.lock();
            if (--remaining_ == 0) done_.notify_one();
        }
    }

    std::vector<std::thread> workers_;
    std::mutex busy_, mutex_;
    std::condition_variable wake_, done_;
    std::function<void(int)> job_;
    int parts_ = 0, remaining_ = 0;
    unsigned long long generation_ = 0;
};

// ---- host arrays and tiles ----------------------------------------------------------------------

// A C-contiguous host array seen as (outer, n, inner) elements of elem bytes.
struct HostView {
    char *data;
    int64_t outer, n, inner, elem;
    bool pinned;
};

// The elements [o0, o0 + o_count) x [k0, k0 + k_count) x [i0, i0 + i_count) of a HostView; on the
// device a tile is packed, (o_count, k_count, i_count).
struct Box {
    int64_t o0, o_count, k0, k_count, i0, i_count;
    int64_t count() const { return o_count * k_count * i_count; }
    size_t offset(const HostView &view) const
    {
        return static_cast<size_t>(((o0 * view.n + k0) * view.inner + i0) * view.elem);
    }
    // Whether the box is one contiguous range of the view.
    bool contiguous(const HostView &view) const
    {
        return i_count == view.inner && (k_count == view.n || o_count == 1);
    }
    // The box as runs of contiguous bytes of the view, one after another in the packed form: the
    // whole box, a run per slab (whole rows), or a run per row.
    int64_t run_bytes(const HostView &view) const
    {
        if (contiguous(view)) return count() * view.elem;
        return (i_count == view.inner ? k_count * i_count : i_count) * view.elem;
    }
    size_t run_offset(const HostView &view, int64_t run) const
    {
        if (contiguous(view)) return offset(view);
        if (i_count == view.inner) return Box{o0 + run, 1, k0, 1, i0, 1}.offset(view);
        return Box{o0 + run / k_count, 1, k0 + run % k_count, 1, i0, 1}.offset(view);
    }
};

// Copies part `part` of `parts` of a box between the host view and its packed form.
static void copy_box_part(const HostView &view, const Box &box, char *packed, bool to_packed, int part,
                          int parts)
{
    const int64_t total = box.count() * view.elem;
    const int64_t cache_line = 64;
    int64_t begin = part == 0 ? 0 : (total * part / parts) & ~(cache_line - 1);
    const int64_t end = part == parts - 1 ? total : (total * (part + 1) / parts) & ~(cache_line - 1);
    const int64_t run = box.run_bytes(view);
    while (begin < end) {
        const int64_t r = begin / run, within = begin - r * run;
        const int64_t length = std::min(run - within, end - begin);
        char *host = view.data + box.run_offset(view, r) + within;
        if (to_packed) std::memcpy(packed + begin, host, length);
        else std::memcpy(host, packed + begin, length);
        begin += length;
    }
}

// The boxes of a view that make up one tile's input, packed one after another in the slot (one
// box for reduce and scan; a convolution tile at a wrapped or mirrored edge gathers several).
using Boxes = std::vector<Box>;

static int64_t boxes_count(const Boxes &boxes)
{
    int64_t count = 0;
    for (const Box &box : boxes) count += box.count();
    return count;
}

// A call's use of the copy threads: boxes copied between the host view and their packed form, in
// the background until finish() (which the destructor calls on every path).
class BoxCopy {
  public:
    BoxCopy() = default;
    BoxCopy(const BoxCopy &) = delete;
    BoxCopy &operator=(const BoxCopy &) = delete;
    ~BoxCopy() { finish(); }

    void start(const HostView &view, const Boxes &boxes, char *packed, bool to_packed)
    {
        finish();
        const size_t bytes = static_cast<size_t>(boxes_count(boxes) * view.elem);
        const int parts = static_cast<int>(std::min<size_t>(CopyThreads::instance().parts(),
                                                            1 + bytes / StreamTuning::bytes_per_copy_part));
        CopyThreads::instance().start(parts, [=](int part) {
            char *at = packed;
            for (const Box &box : boxes) {
                copy_box_part(view, box, at, to_packed, part, parts);
                at += box.count() * view.elem;
            }
        });
        running_ = true;
    }

    void finish()
    {
        if (running_) CopyThreads::instance().finish();
        running_ = false;
    }

  private:
    bool running_ = false;
};

// An asynchronous copy between a pinned host view's box and packed device memory: one run, rows
// of runs, or slabs of rows of runs.
static cudaError_t copy_box_async(const HostView &view, const Box &box, char *device, bool to_device,
                                  cudaStream_t stream)
{
    char *host = view.data + box.offset(view);
    const size_t run = static_cast<size_t>(box.run_bytes(view)), row_pitch = static_cast<size_t>(view.inner * view.elem);
    if (box.contiguous(view))
        return cudaMemcpyAsync(to_device ? device : host, to_device ? host : device, run,
                               to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, stream);
    // Rows of runs: whole rows of slabs, or the rows of one slab.
    const bool whole_rows = box.i_count == view.inner;
    if (whole_rows || box.o_count == 1) {
        const size_t pitch = whole_rows ? row_pitch * view.n : row_pitch;
        const size_t rows = static_cast<size_t>(whole_rows ? box.o_count : box.k_count);
        return to_device ? cudaMemcpy2DAsync(device, run, host, pitch, run, rows, cudaMemcpyHostToDevice, stream)
                         : cudaMemcpy2DAsync(host, pitch, device, run, run, rows, cudaMemcpyDeviceToHost, stream);
    }
    cudaMemcpy3DParms copy = {};
    const cudaPitchedPtr host_ptr = make_cudaPitchedPtr(host, row_pitch, run, static_cast<size_t>(view.n));
    const cudaPitchedPtr device_ptr = make_cudaPitchedPtr(device, run, run, static_cast<size_t>(box.k_count));
    copy.srcPtr = to_device ? host_ptr : device_ptr;
    copy.dstPtr = to_device ? device_ptr : host_ptr;
    copy.extent = make_cudaExtent(run, static_cast<size_t>(box.k_count), static_cast<size_t>(box.o_count));
    copy.kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    return cudaMemcpy3DAsync(&copy, stream);
}

// Copies boxes of a pinned host view to (or from) their packed form in device memory.
static cudaError_t copy_boxes_async(const HostView &view, const Boxes &boxes, char *device, bool to_device,
                                    cudaStream_t stream)
{
    for (const Box &box : boxes) {
        const cudaError_t code = copy_box_async(view, box, device, to_device, stream);
        if (code != cudaSuccess) return code;
        device += box.count() * view.elem;
    }
    return cudaSuccess;
}

// The tile shape for `chunk` elements: whole slabs when one fits, else rows of one slab (a block
// of at least min_rows_per_column_tile rows of a column block when a row is too long).
struct Tiling {
    int64_t o_block, k_block, i_block;
};

static Tiling plan_tiles(int64_t outer, int64_t n, int64_t inner, int64_t chunk)
{
    if (n * inner <= chunk) return {std::min(outer, chunk / (n * inner)), n, inner};
    const int64_t columns = std::min(inner, std::max<int64_t>(1, chunk / StreamTuning::min_rows_per_column_tile));
    return {1, std::min(n, chunk / columns), columns};
}

// Walks the tiles slab by slab, column block by column block, along n.
class TileWalk {
  public:
    TileWalk(const HostView &view, const Tiling &tiling) : view_(view), tiling_(tiling) {}
    bool next(Box *box)
    {
        if (o_ >= view_.outer) return false;
        *box = {o_, std::min(tiling_.o_block, view_.outer - o_), k_, std::min(tiling_.k_block, view_.n - k_),
                i_, std::min(tiling_.i_block, view_.inner - i_)};
        if ((k_ += tiling_.k_block) >= view_.n) {
            k_ = 0;
            if ((i_ += tiling_.i_block) >= view_.inner) {
                i_ = 0;
                o_ += tiling_.o_block;
            }
        }
        return true;
    }

  private:
    HostView view_;
    Tiling tiling_;
    int64_t o_ = 0, k_ = 0, i_ = 0;
};

// Whether [ptr, ptr + bytes) is page-locked host memory (gpuprims', CuPy's, PyTorch's or
// registered), which the DMA engines read and write directly.
static bool host_pinned(const void *ptr, size_t bytes)
{
    const char *ends[2] = {static_cast<const char *>(ptr), static_cast<const char *>(ptr) + bytes - 1};
    for (const char *address : ends) {
        cudaPointerAttributes attributes;
        if (cudaPointerGetAttributes(&attributes, address) != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        if (attributes.type != cudaMemoryTypeHost) return false;
    }
    return true;
}

static HostView host_view(const void *data, int64_t outer, int64_t n, int64_t inner, int64_t elem)
{
    char *bytes = static_cast<char *>(const_cast<void *>(data));
    return {bytes, outer, n, inner, elem, host_pinned(data, static_cast<size_t>(outer * n * inner * elem))};
}

// ---- the engine ---------------------------------------------------------------------------------

// A device's streams, events and pinned slots, created on its first streamed call and reused.
struct Engine {
    static constexpr int slots = StreamTuning::slots;
    std::mutex mutex;  // one streamed call per device at a time
    bool created = false;
    cudaStream_t h2d = nullptr, d2h = nullptr;
    cudaEvent_t allocated = nullptr, copies_done = nullptr;
    cudaEvent_t in_copied[slots] = {}, computed[slots] = {}, out_copied[slots] = {};
    char *pinned_in[slots] = {}, *pinned_out[slots] = {};
    size_t pinned_in_bytes = 0, pinned_out_bytes = 0;

    int create(gp_error *err)
    {
        if (created) return 0;
        GP_CUDA_TRY(cudaStreamCreateWithFlags(&h2d, cudaStreamNonBlocking), err, "cudaStreamCreate");
        GP_CUDA_TRY(cudaStreamCreateWithFlags(&d2h, cudaStreamNonBlocking), err, "cudaStreamCreate");
        GP_CUDA_TRY(cudaEventCreateWithFlags(&allocated, cudaEventDisableTiming), err, "cudaEventCreate");
        GP_CUDA_TRY(cudaEventCreateWithFlags(&copies_done, cudaEventDisableTiming), err, "cudaEventCreate");
        for (int s = 0; s < slots; ++s) {
            GP_CUDA_TRY(cudaEventCreateWithFlags(&in_copied[s], cudaEventDisableTiming), err, "cudaEventCreate");
            GP_CUDA_TRY(cudaEventCreateWithFlags(&computed[s], cudaEventDisableTiming), err, "cudaEventCreate");
            GP_CUDA_TRY(cudaEventCreateWithFlags(&out_copied[s], cudaEventDisableTiming), err, "cudaEventCreate");
        }
        created = true;
        return 0;
    }

    // Grows a ring of pinned slots to `bytes` each (kept between calls).
    static int reserve(char *(&ring)[slots], size_t &capacity, size_t bytes, gp_error *err)
    {
        if (bytes <= capacity) return 0;
        for (char *&slot : ring) {
            if (slot) cudaFreeHost(slot);
            slot = nullptr;
        }
        capacity = 0;
        for (char *&slot : ring)
            GP_CUDA_TRY(cudaHostAlloc(reinterpret_cast<void **>(&slot), bytes, cudaHostAllocPortable), err,
                        "cudaHostAlloc (staging)");
        capacity = bytes;
        return 0;
    }
};

constexpr int max_engine_devices = 64;
static Engine engines[max_engine_devices];

// A tile of a streamed call: the box its computation is told about (reduce and scan: the input
// box; convolution and transpose: the output box) and the boxes of the input it is packed from.
struct Tile {
    Box box;
    Boxes input;
};
// Fills in the next tile; false after the last.
using NextTile = std::function<bool(Tile *tile)>;

// The tiles of a Tiling, each one input box.
static NextTile walk_tiles(const HostView &in, const Tiling &tiling)
{
    return [walk = TileWalk(in, tiling)](Tile *tile) mutable {
        if (!walk.next(&tile->box)) return false;
        tile->input.assign(1, tile->box);
        return true;
    };
}

// What a tile's computation hands back: the box of the result it wrote to its device out slot
// (count 0: none yet, as for a reduction tile that is not the last of its columns).
using ComputeTile = std::function<int(const Box &tile_box, const void *device_in, void *device_out,
                                      Box *out_box)>;

// Streams the tiles next_tile gives through the ring, computing each on the work stream and
// copying results into `out`.  in_slot / out_slot: device bytes of one tile's input and result.
static int run_pipeline(Engine &engine, const StreamSettings &settings, const HostView &in, const HostView &out,
                        const NextTile &next_tile, size_t in_slot, size_t out_slot, const ComputeTile &compute,
                        gp_error *err)
{
    constexpr int slots = Engine::slots;
    const cudaStream_t work = work_stream();
    if (engine.create(err) ||
        (!in.pinned && Engine::reserve(engine.pinned_in, engine.pinned_in_bytes, in_slot, err)) ||
        (!out.pinned && Engine::reserve(engine.pinned_out, engine.pinned_out_bytes, out_slot, err)))
        return -1;
    // One allocation holds every slot's input and result (one pool call instead of 2 * slots:
    // host time before the first copy and after the last one is not overlapped with anything).
    constexpr int64_t alignment = StreamTuning::slot_alignment;
    const size_t in_stride = static_cast<size_t>(round_up(static_cast<int64_t>(in_slot), alignment));
    const size_t out_stride = static_cast<size_t>(round_up(static_cast<int64_t>(out_slot), alignment));
    DeviceBuffer device_slots;
    if (device_slots.allocate(slots * (in_stride + out_stride), err)) return -1;
    const auto device_in = [&](int s) { return device_slots.as<char>() + s * in_stride; };
    const auto device_out = [&](int s) { return device_slots.as<char>() + slots * in_stride + s * out_stride; };
    // Declared after the slots, so run before their (work-stream ordered) release on every failed
    // path out of here, which may leave copies in flight: the work stream waits for the copy
    // streams, on the device, without blocking the host.
    struct CopiesBeforeRelease {
        const Engine &engine;
        cudaStream_t work;
        bool all_done = false;
        ~CopiesBeforeRelease()
        {
            if (all_done) return;
            for (cudaStream_t copies : {engine.h2d, engine.d2h})
                if (cudaEventRecord(engine.copies_done, copies) != cudaSuccess ||
                    cudaStreamWaitEvent(work, engine.copies_done, 0) != cudaSuccess) {
                    cudaGetLastError();  // then wait on the host; the call reports its first error
                    if (cudaStreamSynchronize(copies) != cudaSuccess) cudaGetLastError();
                }
        }
    } copies_before_release{engine, work};
    // The slots are allocated in the work stream's order; the copy streams start after that.
    GP_CUDA_TRY(cudaEventRecord(engine.allocated, work), err, "cudaEventRecord");
    GP_CUDA_TRY(cudaStreamWaitEvent(engine.h2d, engine.allocated, 0), err, "cudaStreamWaitEvent");
    GP_CUDA_TRY(cudaStreamWaitEvent(engine.d2h, engine.allocated, 0), err, "cudaStreamWaitEvent");

    struct Pending {
        long long tile;
        int slot;
        Box box;
    };
    std::deque<Pending> pending;  // results copied (or being copied) to pinned out slots
    BoxCopy copies;               // the copy threads' current job: staging the next tile's input
    // Waits for the pending results of tiles up to `last` and scatters them into the host result.
    auto deliver = [&](long long last) {
        while (!pending.empty() && pending.front().tile <= last) {
            const Pending done = pending.front();
            GP_CUDA_TRY(cudaEventSynchronize(engine.out_copied[done.slot]), err, "copy to host");
            if (!out.pinned) {
                copies.start(out, Boxes(1, done.box), engine.pinned_out[done.slot], false);
                copies.finish();
            }
            pending.pop_front();
        }
        return 0;
    };
    // Starts copying a tile's input into its pinned slot once the slot's previous tile left it.
    auto stage = [&](long long tile, const Boxes &input) {
        if (in.pinned) return 0;
        const int s = static_cast<int>(tile % slots);
        GP_CUDA_TRY(cudaEventSynchronize(engine.in_copied[s]), err, "copy to device");
        copies.start(in, input, engine.pinned_in[s], true);
        return 0;
    };

    Tile current, next;
    bool more = next_tile(&next);
    if (more && stage(0, next.input)) return -1;
    for (long long tile = 0; more; ++tile) {
        const int s = static_cast<int>(tile % slots);
        std::swap(current, next);
        copies.finish();
        if (tile == settings.fail_tile)
            return fail(err, GP_ERR_DEVICE, "streamed call failed at the tile GPUPRIMS_STREAM_FAIL_TILE names");
        // The copy threads stage the next tile while this one's copies and kernels are enqueued.
        more = next_tile(&next);
        if (more && stage(tile + 1, next.input)) return -1;
        // In, once the device slot's previous tile has been computed.
        GP_CUDA_TRY(cudaStreamWaitEvent(engine.h2d, engine.computed[s], 0), err, "cudaStreamWaitEvent");
        GP_CUDA_TRY(in.pinned ? copy_boxes_async(in, current.input, device_in(s), true, engine.h2d)
                              : cudaMemcpyAsync(device_in(s), engine.pinned_in[s],
                                                static_cast<size_t>(boxes_count(current.input) * in.elem),
                                                cudaMemcpyHostToDevice, engine.h2d),
                    err, "copy to device");
        GP_CUDA_TRY(cudaEventRecord(engine.in_copied[s], engine.h2d), err, "cudaEventRecord");
        // Compute once the tile is in and the slot's previous result is out.
        GP_CUDA_TRY(cudaStreamWaitEvent(work, engine.in_copied[s], 0), err, "cudaStreamWaitEvent");
        GP_CUDA_TRY(cudaStreamWaitEvent(work, engine.out_copied[s], 0), err, "cudaStreamWaitEvent");
        Box out_box{0, 0, 0, 0, 0, 0};
        if (compute(current.box, device_in(s), device_out(s), &out_box)) return -1;
        GP_CUDA_TRY(cudaEventRecord(engine.computed[s], work), err, "cudaEventRecord");
        if (out_box.count() == 0) continue;
        // Out, once the pinned out slot's previous result has reached the host result.
        if (deliver(tile - slots)) return -1;
        GP_CUDA_TRY(cudaStreamWaitEvent(engine.d2h, engine.computed[s], 0), err, "cudaStreamWaitEvent");
        const size_t out_bytes = static_cast<size_t>(out_box.count() * out.elem);
        GP_CUDA_TRY(out.pinned ? copy_box_async(out, out_box, device_out(s), false, engine.d2h)
                               : cudaMemcpyAsync(engine.pinned_out[s], device_out(s), out_bytes,
                                                 cudaMemcpyDeviceToHost, engine.d2h),
                    err, "copy to host");
        GP_CUDA_TRY(cudaEventRecord(engine.out_copied[s], engine.d2h), err, "cudaEventRecord");
        pending.push_back({tile, s, out_box});
    }
    if (deliver(LLONG_MAX)) return -1;
    // The last result is out, so everything is done: each tile's copy out waits for its kernels,
    // which wait for its copy in and run in order.
    copies_before_release.all_done = true;
    return 0;
}

// Runs the pipeline under the device's engine lock and returns with its copies and kernels done,
// on failure too, so the pinned slots and device buffers are free for the next call.
static int stream_tiles(int device, const HostView &in, const HostView &out, const NextTile &next_tile,
                        size_t in_slot, size_t out_slot, const ComputeTile &compute, gp_error *err)
{
    if (device < 0 || device >= max_engine_devices) return fail(err, GP_ERR_INVALID, "device index out of range");
    Engine &engine = engines[device];
    std::lock_guard<std::mutex> lock(engine.mutex);
    const StreamSettings settings = StreamSettings::current();
    const int status = run_pipeline(engine, settings, in, out, next_tile, in_slot, out_slot, compute, err);
    // After a failure the work stream waits for the copy streams' last work (run_pipeline's
    // CopiesBeforeRelease), so once it is idle, all three are.
    if (status != 0 && cudaStreamSynchronize(work_stream()) != cudaSuccess) cudaGetLastError();
    return status;
}

// The tile limits of a convolution or transpose call, in elements of `elem` bytes: the chunk
// setting, and what one tile's input and result together may hold so that the slots fit
// GPUPRIMS_MAX_DEVICE_BYTES.
struct TileLimits {
    int64_t chunk, slot;
};

// The chunk setting in elements of `elem` bytes (at least one), and at most a min_tiles-th of the
// call's `count` elements.
static int64_t chunk_elements(const StreamSettings &settings, int64_t count, size_t elem)
{
    const int64_t setting = static_cast<int64_t>(std::min<size_t>(settings.chunk_bytes / elem, INT64_MAX / 2));
    const int64_t share = (count + StreamTuning::min_tiles - 1) / StreamTuning::min_tiles;
    return std::max<int64_t>(1, std::min(setting, share));
}

// For a call of `count` elements (input elements of a convolution, output ones of a transpose).
static TileLimits tile_limits(int64_t elem, int64_t count)
{
    const StreamSettings settings = StreamSettings::current();
    return {chunk_elements(settings, count, static_cast<size_t>(elem)),
            static_cast<int64_t>(std::min<size_t>(settings.max_device_bytes, INT64_MAX) / Engine::slots /
                                 static_cast<size_t>(elem))};
}

static int too_small_for_a_tile(gp_error *err)
{
    return fail(err, GP_ERR_NOMEM, "GPUPRIMS_MAX_DEVICE_BYTES is too small to stream this array");
}

// The elements of a tile of a reduce or scan of `count` elements: chunk_elements, lowered so that
// the slots, carries and workspace fit GPUPRIMS_MAX_DEVICE_BYTES.  0 (with err set) when not even
// one element fits.
static int64_t tile_elements(size_t in_elem, size_t out_elem, size_t widest, int64_t count, gp_error *err)
{
    const StreamSettings settings = StreamSettings::current();
    const size_t per_element = Engine::slots * (in_elem + out_elem) + StreamTuning::workspace_bytes_per_element;
    const size_t fitting = settings.max_device_bytes / per_element;
    if (fitting == 0) {
        too_small_for_a_tile(err);
        return 0;
    }
    return std::min(chunk_elements(settings, count, widest), static_cast<int64_t>(std::min<size_t>(fitting, INT64_MAX / 2)));
}

// A reduce or scan descriptor for one tile, packed on the device.
template <class Desc> static Desc tile_desc(const Desc &whole, const Box &box, const void *device_in, void *device_out)
{
    Desc tile = whole;
    tile.outer = box.o_count;
    tile.n = box.k_count;
    tile.inner = box.i_count;
    tile.in = device_in;
    tile.out = device_out;
    return tile;
}

// The dtype partial results accumulate in: float for float16 sums and scans, else the result's.
static gp_dtype accumulator_dtype(gp_dtype out) { return out == GP_FLOAT16 ? GP_FLOAT32 : out; }

int stream_reduce(int device, const gp_reduce_desc *desc, gp_error *err)
{
    const int64_t in_elem = gp_dtype_size(desc->in_dtype), out_elem = gp_dtype_size(desc->out_dtype);
    const int64_t chunk = tile_elements(in_elem, out_elem, in_elem, desc->outer * desc->n * desc->inner, err);
    if (chunk == 0) return -1;
    const HostView in = host_view(desc->in, desc->outer, desc->n, desc->inner, in_elem);
    const HostView out = host_view(desc->out, desc->outer, 1, desc->inner, out_elem);
    const Tiling tiling = plan_tiles(desc->outer, desc->n, desc->inner, chunk);
    const gp_dtype acc = desc->op == GP_MIN || desc->op == GP_MAX ? desc->in_dtype : accumulator_dtype(desc->out_dtype);
    const size_t acc_row = static_cast<size_t>(tiling.i_block * gp_dtype_size(acc));

    // Slabs cut along n: [running | tile partial] pairs, ping-ponged by the combining reduction.
    DeviceBuffer running;
    if (tiling.k_block < desc->n && running.allocate(4 * acc_row, err)) return -1;
    char *pairs[2] = {running.as<char>(), running.as<char>() + 2 * acc_row};
    int current = 0;
    const ComputeTile compute = [&](const Box &box, const void *device_in, void *device_out, Box *out_box) {
        const bool first = box.k0 == 0, last = box.k0 + box.k_count == desc->n;
        gp_reduce_desc tile = tile_desc(*desc, box, device_in, device_out);
        if (last) *out_box = {box.o0, box.o_count, 0, 1, box.i0, box.i_count};
        if (first && last) return gp_cuda_reduce_resident(device, &tile, err);
        const size_t row = static_cast<size_t>(box.i_count * gp_dtype_size(acc));
        tile.out_dtype = acc;
        tile.out = first ? pairs[current] : pairs[current] + row;
        if (gp_cuda_reduce_resident(device, &tile, err)) return -1;
        if (first) return 0;
        // Combine the pair into the running result; the last tile's goes to the out slot.
        const bool direct = last && acc == desc->out_dtype;
        const gp_reduce_desc combine{desc->op, acc, acc, 1, 2, box.i_count, pairs[current],
                                     direct ? device_out : pairs[1 - current]};
        if (gp_cuda_reduce_resident(device, &combine, err)) return -1;
        current = 1 - current;
        if (!last || direct) return 0;
        return gp_cuda_convert_resident(device, acc, pairs[current], desc->out_dtype, device_out, box.i_count, 0,
                                        err);
    };
    const size_t out_slot = static_cast<size_t>(tiling.o_block * tiling.i_block * out_elem);
    return stream_tiles(device, in, out, walk_tiles(in, tiling), static_cast<size_t>(chunk * in_elem), out_slot,
                        compute, err);
}

int stream_scan(int device, const gp_scan_desc *desc, gp_error *err)
{
    const int64_t in_elem = gp_dtype_size(desc->in_dtype), out_elem = gp_dtype_size(desc->out_dtype);
    const int64_t chunk =
        tile_elements(in_elem, out_elem, std::max(in_elem, out_elem), desc->outer * desc->n * desc->inner, err);
    if (chunk == 0) return -1;
    const HostView in = host_view(desc->in, desc->outer, desc->n, desc->inner, in_elem);
    const HostView out = host_view(desc->out, desc->outer, desc->n, desc->inner, out_elem);
    const Tiling tiling = plan_tiles(desc->outer, desc->n, desc->inner, chunk);
    const size_t carry_row = static_cast<size_t>(tiling.i_block * gp_dtype_size(accumulator_dtype(desc->out_dtype)));

    // Slabs cut along n: each column's running total, ping-ponged from tile to tile.
    DeviceBuffer carries;
    if (tiling.k_block < desc->n && carries.allocate(2 * carry_row, err)) return -1;
    char *carry[2] = {carries.as<char>(), carries.as<char>() + carry_row};
    int current = 0;
    const ComputeTile compute = [&](const Box &box, const void *device_in, void *device_out, Box *out_box) {
        const bool first = box.k0 == 0, last = box.k0 + box.k_count == desc->n;
        const gp_scan_desc tile = tile_desc(*desc, box, device_in, device_out);
        *out_box = box;
        if (scan_resident_carried(device, &tile, first ? nullptr : carry[current], last ? nullptr : carry[1 - current],
                                  err))
            return -1;
        current = 1 - current;
        return 0;
    };
    return stream_tiles(device, in, out, walk_tiles(in, tiling), static_cast<size_t>(chunk * in_elem),
                        static_cast<size_t>(chunk * out_elem), compute, err);
}

// Along one axis of a convolution's image (rows or columns): the image's length, the mask's
// extent, the offset of the first window and the result's length.
struct CorrelateAxis {
    int64_t length, mask, offset, out_length;

    // The image steps a tile of `count` results reads along the axis (at most).
    int64_t in_steps(int64_t count) const { return count == out_length ? length : count + mask - 1; }
};

// What a tile of results [first, first + count) along an axis reads: runs of image steps (first,
// steps), packed one after another, and the image its launch sees along the axis: `length` steps,
// read from `offset` on.
struct AxisCut {
    std::vector<std::pair<int64_t, int64_t>> runs;
    int64_t length, offset;
};

// A tile along the whole axis sees the whole image.  Otherwise windows that stay inside the image,
// or reach past it under the fill rule, read the image's part they overlap, at an offset (the
// launch reads the fill value past that part, exactly where the whole image ends); under wrap and
// symm, the steps the rule reads are gathered in the order the windows read them, so that the
// launch never reads past its own tile.
static AxisCut cut_axis(const CorrelateAxis &axis, gp_boundary boundary, int64_t first, int64_t count)
{
    AxisCut cut;
    const auto add = [&](int64_t from, int64_t steps) {  // appends, merged with an adjacent last run
        if (!cut.runs.empty() && cut.runs.back().first + cut.runs.back().second == from) cut.runs.back().second += steps;
        else cut.runs.emplace_back(from, steps);
    };
    if (first == 0 && count == axis.out_length) {
        add(0, axis.length);
        cut.length = axis.length;
        cut.offset = axis.offset;
        return cut;
    }
    const int64_t lo = first + axis.offset, hi = lo + count + axis.mask - 1;  // the steps the windows read
    const int64_t begin = std::max<int64_t>(lo, 0), end = std::min(hi, axis.length);
    if (boundary == GP_BOUNDARY_FILL || (lo >= 0 && hi <= axis.length)) {
        const int64_t step = lo >= axis.length ? axis.length - 1 : 0;  // no overlap: one step every read misses
        add(begin < end ? begin : step, begin < end ? end - begin : 1);
        cut.length = cut.runs[0].second;
        cut.offset = lo - cut.runs[0].first;
        return cut;
    }
    for (int64_t x = lo; x < std::min<int64_t>(hi, 0); ++x) add(gp_boundary_index(x, axis.length, boundary), 1);
    if (begin < end) add(begin, end - begin);
    for (int64_t x = std::max(lo, axis.length); x < hi; ++x) add(gp_boundary_index(x, axis.length, boundary), 1);
    cut.length = hi - lo;
    cut.offset = 0;
    return cut;
}

// The boxes of the image (1, rows, cols) a tile is packed from, row-major: a box per run of rows
// when the tile reads one run of columns, else a box per row and run of columns.
static void correlate_tile_boxes(const AxisCut &rows, const AxisCut &cols, Boxes *input)
{
    input->clear();
    for (const auto &row_run : rows.runs) {
        if (cols.runs.size() == 1) {
            input->push_back({0, 1, row_run.first, row_run.second, cols.runs[0].first, cols.runs[0].second});
            continue;
        }
        for (int64_t row = row_run.first; row < row_run.first + row_run.second; ++row)
            for (const auto &col_run : cols.runs) input->push_back({0, 1, row, 1, col_run.first, col_run.second});
    }
}

// Convolution streams tiles of result rows (whole rows while a tile of them, with the mask's halo,
// fits a chunk), else blocks of rows by columns: 1-D signals and very wide images.  Each tile's
// input is the image it reads, halo included.
int stream_correlate(int device, const gp_correlate_desc *desc, gp_error *err)
{
    const int64_t elem = gp_dtype_size(desc->dtype);
    const CorrelateAxis rows{desc->rows, desc->mask_rows, desc->row_offset, desc->out_rows};
    const CorrelateAxis cols{desc->cols, desc->mask_cols, desc->col_offset, desc->out_cols};
    const auto slot_elements = [&](int64_t h, int64_t w) { return rows.in_steps(h) * cols.in_steps(w) + h * w; };
    // Tiles of `chunk` input elements, halved (rows first while they are whole, else the longer
    // side) until a slot fits.
    const TileLimits limits = tile_limits(elem, desc->rows * desc->cols);
    int64_t h = 1, w = cols.out_length;
    if (rows.mask * cols.in_steps(w) <= limits.chunk) {
        h = std::min(rows.out_length, std::max<int64_t>(1, limits.chunk / cols.in_steps(w) - rows.mask + 1));
    } else {
        const int64_t side = static_cast<int64_t>(std::sqrt(static_cast<double>(limits.chunk)));
        h = std::min(rows.out_length, std::max<int64_t>(1, side - rows.mask + 1));
        w = std::min(cols.out_length, std::max<int64_t>(1, limits.chunk / rows.in_steps(h) - cols.mask + 1));
    }
    while (slot_elements(h, w) > limits.slot && (h > 1 || w > 1))
        ((h > 1 && w == cols.out_length) || h >= w ? h : w) /= 2;
    if (slot_elements(h, w) > limits.slot) return too_small_for_a_tile(err);

    const HostView in = host_view(desc->in, 1, desc->rows, desc->cols, elem);
    const HostView out = host_view(desc->out, 1, desc->out_rows, desc->out_cols, elem);
    int64_t row = 0, col = 0;
    const NextTile next_tile = [&](Tile *tile) {
        if (row >= rows.out_length) return false;
        tile->box = {0, 1, row, std::min(h, rows.out_length - row), col, std::min(w, cols.out_length - col)};
        correlate_tile_boxes(cut_axis(rows, desc->boundary, row, tile->box.k_count),
                             cut_axis(cols, desc->boundary, col, tile->box.i_count), &tile->input);
        if ((col += w) >= cols.out_length) {
            col = 0;
            row += h;
        }
        return true;
    };
    const ComputeTile compute = [&](const Box &box, const void *device_in, void *device_out, Box *out_box) {
        const AxisCut row_cut = cut_axis(rows, desc->boundary, box.k0, box.k_count);
        const AxisCut col_cut = cut_axis(cols, desc->boundary, box.i0, box.i_count);
        gp_correlate_desc tile = *desc;
        tile.in = device_in;
        tile.out = device_out;
        tile.rows = row_cut.length;
        tile.row_offset = row_cut.offset;
        tile.out_rows = box.k_count;
        tile.cols = col_cut.length;
        tile.col_offset = col_cut.offset;
        tile.out_cols = box.i_count;
        *out_box = box;
        return gp_cuda_correlate_resident(device, &tile, err);
    };
    return stream_tiles(device, in, out, next_tile, static_cast<size_t>(rows.in_steps(h) * cols.in_steps(w) * elem),
                        static_cast<size_t>(h * w * elem), compute, err);
}

// The span of `copy` (see gp_copy_span) with its dimension s cut to s_steps and p (unless < 0) to
// p_steps.
struct Span {
    int64_t lowest, extent;
};
static Span cut_span(gp_copy_desc copy, int s, int64_t s_steps, int p, int64_t p_steps)
{
    copy.shape[s] = s_steps;
    if (p >= 0) copy.shape[p] = p_steps;
    Span span;
    gp_copy_span(&copy, &span.lowest, &span.extent);
    return span;
}

// Transpose streams blocks of its output: a range of steps along s, the dimension of the largest
// source stride, by a range along p, the dimension of the next largest, by all of the others.  Each
// step along s reads one run of the source (the span of its range along p), and the block's result
// is runs of the output; square blocks keep both kinds of runs long, as the copy engines need
// (2-D copies of runs under 8 KiB run at half speed or less on the H200 machine).  A short s
// makes panels: blocks of all of p.  Sources whose steps along s overlap (zero or overlapping
// strides) stream as panels, each read as one run of the source.
int stream_copy_strided(int device, const gp_copy_desc *desc, gp_error *err)
{
    gp_copy_desc copy = *desc;
    gp_copy_merge(&copy);
    if (copy.ndim == 0) copy = gp_copy_desc{1, copy.elem_size, {1}, {0}, copy.in, copy.out};
    const int64_t elem = copy.elem_size;
    int s = 0;
    for (int d = 1; d < copy.ndim; ++d)
        if (std::abs(copy.strides[d]) > std::abs(copy.strides[s])) s = d;
    const int64_t s_stride = copy.strides[s];
    const Span whole = cut_span(copy, s, copy.shape[s], -1, 0), step = cut_span(copy, s, 1, -1, 0);
    const bool apart = step.extent <= std::abs(s_stride);  // each step along s reads its own run
    int p = -1;
    for (int d = 0; apart && d < copy.ndim; ++d)
        if (d != s && (p < 0 || std::abs(copy.strides[d]) > std::abs(copy.strides[p]))) p = d;
    const int64_t p_stride = p < 0 ? 0 : copy.strides[p];
    const int64_t s_len = copy.shape[s], p_len = p < 0 ? 1 : copy.shape[p];
    const int64_t rest = gp_copy_count(&copy) / (s_len * p_len);  // output elements per (s, p) step

    // Block sizes: `chunk` result elements, square or a panel, halved along their longer side until
    // their slots fit GPUPRIMS_MAX_DEVICE_BYTES.
    const auto in_elements = [&](int64_t s_steps, int64_t p_steps) {
        return apart ? s_steps * cut_span(copy, s, 1, p, p_steps).extent : cut_span(copy, s, s_steps, -1, 0).extent;
    };
    const auto slot_elements = [&](int64_t s_steps, int64_t p_steps) {
        return in_elements(s_steps, p_steps) + s_steps * p_steps * rest;
    };
    const TileLimits limits = tile_limits(elem, gp_copy_count(&copy));
    const int64_t area = std::max<int64_t>(1, limits.chunk / rest);
    const int64_t side = std::max<int64_t>(1, static_cast<int64_t>(std::sqrt(static_cast<double>(area))));
    int64_t p_block = std::max<int64_t>(1, std::min(p_len, std::max(side, area / s_len)));
    int64_t s_block = std::max<int64_t>(1, std::min(s_len, area / p_block));
    while (slot_elements(s_block, p_block) > limits.slot && (s_block > 1 || p_block > 1))
        (s_block >= p_block ? s_block : p_block) /= 2;
    if (slot_elements(s_block, p_block) > limits.slot) return too_small_for_a_tile(err);

    // The source seen as rows of |s_stride| elements, one per step along s (the lowest address first),
    // or, when steps overlap, as one row.
    const char *base = static_cast<const char *>(copy.in) + whole.lowest * elem;
    const HostView in{const_cast<char *>(base), 1, apart ? s_len : 1, apart ? std::abs(s_stride) : whole.extent,
                      elem, host_pinned(base, static_cast<size_t>(whole.extent * elem))};
    // The output seen as (a, b, c): the dimensions before the first cut one, from it to the second
    // (with p < 0, a size-1 dimension past the last), from the second on.
    const int first_cut = p < 0 ? s : std::min(s, p), second_cut = p < 0 ? copy.ndim : std::max(s, p);
    int64_t a = 1, b_unit = 1, c_unit = 1;
    for (int d = 0; d < copy.ndim; ++d) (d < first_cut ? a : d < second_cut ? b_unit : c_unit) *= copy.shape[d];
    b_unit /= copy.shape[first_cut];
    if (second_cut < copy.ndim) c_unit /= copy.shape[second_cut];
    const HostView out = host_view(copy.out, a, copy.shape[first_cut] * b_unit,
                                   (second_cut < copy.ndim ? copy.shape[second_cut] : 1) * c_unit, elem);
    struct Block {
        int64_t s0, s_count, p0, p_count;
    };
    const auto output_box = [&](const Block &block) {
        const bool s_first = first_cut == s;
        return Box{0, a, (s_first ? block.s0 : block.p0) * b_unit, (s_first ? block.s_count : block.p_count) * b_unit,
                   (s_first ? block.p0 : block.s0) * c_unit, (s_first ? block.p_count : block.s_count) * c_unit};
    };
    const auto block_of = [&](const Box &box) {
        const bool s_first = first_cut == s;
        const int64_t k0 = box.k0 / b_unit, k_count = box.k_count / b_unit;
        const int64_t i0 = box.i0 / c_unit, i_count = box.i_count / c_unit;
        return s_first ? Block{k0, k_count, i0, i_count} : Block{i0, i_count, k0, k_count};
    };

    Block at{0, 0, 0, 0};
    const NextTile next_tile = [&](Tile *tile) {
        if (at.s0 >= s_len) return false;
        const Block block{at.s0, std::min(s_block, s_len - at.s0), at.p0, std::min(p_block, p_len - at.p0)};
        tile->box = output_box(block);
        if (apart) {
            const Span run = cut_span(copy, s, 1, p, block.p_count);
            const int64_t row = s_stride > 0 ? block.s0 : s_len - block.s0 - block.s_count;
            tile->input.assign(1, Box{0, 1, row, block.s_count, block.p0 * p_stride + run.lowest - step.lowest,
                                      run.extent});
        } else {
            const Span run = cut_span(copy, s, block.s_count, -1, 0);
            tile->input.assign(1, Box{0, 1, 0, 1, block.s0 * s_stride + run.lowest - whole.lowest, run.extent});
        }
        if ((at.p0 += block.p_count) >= p_len) {
            at.p0 = 0;
            at.s0 += block.s_count;
        }
        return true;
    };
    // A block's source on the device: its runs packed one after another (the lowest address
    // first), or its one run.
    const ComputeTile compute = [&](const Box &box, const void *device_in, void *device_out, Box *out_box) {
        const Block block = block_of(box);
        gp_copy_desc tile = copy;
        tile.shape[s] = block.s_count;
        if (p >= 0) tile.shape[p] = block.p_count;
        int64_t first_element;  // where element (0, ..., 0) of the block lies in the packed source
        if (apart) {
            const Span run = cut_span(copy, s, 1, p, block.p_count);
            tile.strides[s] = s_stride > 0 ? run.extent : -run.extent;
            first_element = (s_stride > 0 ? 0 : (block.s_count - 1) * run.extent) - run.lowest;
        } else {
            first_element = -cut_span(copy, s, block.s_count, -1, 0).lowest;
        }
        tile.in = static_cast<const char *>(device_in) + first_element * elem;
        tile.out = device_out;
        *out_box = box;
        return gp_cuda_copy_strided_resident(device, &tile, err);
    };
    return stream_tiles(device, in, out, next_tile, static_cast<size_t>(in_elements(s_block, p_block) * elem),
                        static_cast<size_t>(s_block * p_block * rest * elem), compute, err);
}

}  // namespace gp

// ---- page-locked host memory --------------------------------------------------------------------

namespace gp {

// Pinned blocks for streamed results.  The copy engine writes a result straight into one, and the
// block returns here when the result array dies, so steady-state calls neither pin memory (~0.4 s
// per GiB) nor fault in fresh pages (writing a fresh 256 MiB NumPy array costs ~60 ms of page
// faults on the H200 machine, more than the whole streamed call).
class PinnedCache {
  public:
    static PinnedCache &instance()
    {
        static PinnedCache *cache = new PinnedCache();
        return *cache;
    }

    // A cached block of at least `bytes` (and at most twice that), else a new one.
    int take(size_t bytes, void **ptr, size_t *capacity, gp_error *err)
    {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            auto block = free_.lower_bound(bytes);
            if (block != free_.end() && block->first <= 2 * bytes) {
                *capacity = block->first;
                *ptr = block->second;
                cached_ -= block->first;
                free_.erase(block);
                order_.erase(std::find(order_.begin(), order_.end(), *ptr));
                return 0;
            }
        }
        const size_t granularity = StreamTuning::pinned_block_granularity;
        *capacity = (std::max<size_t>(bytes, 1) + granularity - 1) / granularity * granularity;
        GP_CUDA_TRY(cudaHostAlloc(ptr, *capacity, cudaHostAllocPortable), err, "cudaHostAlloc");
        return 0;
    }

    // Keeps the block for reuse; frees the oldest blocks past the cache's size.
    void give(void *ptr, size_t capacity)
    {
        std::vector<void *> evicted;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            free_.emplace(capacity, ptr);
            order_.push_back(ptr);
            cached_ += capacity;
            while (cached_ > StreamTuning::pinned_cache_bytes && !order_.empty()) {
                void *oldest = order_.front();
                order_.pop_front();
                auto block = std::find_if(free_.begin(), free_.end(), [&](const auto &entry) { return entry.second == oldest; });
                cached_ -= block->first;
                evicted.push_back(oldest);
                free_.erase(block);
            }
        }
        for (void *block : evicted)
            if (cudaFreeHost(block) != cudaSuccess) cudaGetLastError();
    }

    // Frees every cached block.
    void trim()
    {
        std::vector<void *> blocks;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            for (const auto &entry : free_) blocks.push_back(entry.second);
            free_.clear();
            order_.clear();
            cached_ = 0;
        }
        for (void *block : blocks)
            if (cudaFreeHost(block) != cudaSuccess) cudaGetLastError();
    }

  private:
    std::mutex mutex_;
    std::multimap<size_t, void *> free_;  // capacity -> block
    std::deque<void *> order_;            // the cached blocks, oldest first
    size_t cached_ = 0;
};

void release_pinned_results() { PinnedCache::instance().trim(); }

}  // namespace gp

extern "C" int gp_cuda_host_alloc(size_t bytes, int cached, void **ptr, size_t *capacity, gp_error *err)
{
    *ptr = nullptr;
    *capacity = bytes ? bytes : 1;
    if (gp_cuda_device_count(err) == 0) return -1;
    if (cached) return gp::PinnedCache::instance().take(bytes, ptr, capacity, err);
    GP_CUDA_TRY(cudaHostAlloc(ptr, *capacity, cudaHostAllocPortable), err, "cudaHostAlloc");
    return 0;
}

extern "C" void gp_cuda_host_free(void *ptr, size_t capacity, int cached)
{
    if (ptr == nullptr) return;
    if (cached) gp::PinnedCache::instance().give(ptr, capacity);
    else if (cudaFreeHost(ptr) != cudaSuccess) cudaGetLastError();
}

extern "C" int gp_cuda_pinned_result_wanted(gp_streamed_op op, size_t in_bytes, size_t out_bytes, int64_t count)
{
    using gp::StreamTuning;
    return out_bytes >= StreamTuning::min_pinned_result_bytes && out_bytes <= StreamTuning::pinned_cache_bytes &&
           gp::should_stream(op, in_bytes, out_bytes, count);
}

extern "C" int gp_cuda_host_is_pinned(const void *ptr, size_t bytes)
{
    gp_error ignored;
    if (ptr == nullptr || bytes == 0 || gp_cuda_device_count(&ignored) == 0) return 0;
    return gp::host_pinned(ptr, bytes);
}
