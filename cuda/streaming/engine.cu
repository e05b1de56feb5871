// The streaming engine: calls on host arrays at the speed of the bus, never holding the whole array
// on the GPU.  It knows no primitive: a call comes as a Tiler (engine.cuh), which cuts it into
// tiles and computes each one; the engine moves them.  Each tile goes
//   host array --(copy threads)--> pinned slot --(H2D stream)--> device slot --(work stream:
//   the tiler's computation)--> device out slot --(D2H stream)--> pinned out slot --(copy threads)-->
//   host result
// through a ring of StreamTuning::slots slots, with events ordering the three streams, so copy in,
// compute and copy out of different tiles overlap.  One host thread cannot copy pageable memory
// as fast as the bus moves it, so the host thread pool (csrc/parallel/thread_pool.h) shares every
// staging copy.  A strided input view is gathered into the slots by the CPU backend's reader
// (csrc/cpu/gather.h), never copied whole.  Pinned (page-locked) host arrays skip their staging
// copy: the DMA reads or writes them directly.
//
// Pinned slots, streams and events are allocated once per device (EngineState, which the device's
// DeviceState holds) and reused; the device slots come from gpuprims' caching pool per call.  One
// streamed call runs per device at a time (the bus is the bottleneck; a second caller waits), and
// every call returns with its copies and kernels done, also after a failure (only the slots'
// stream-ordered release may be pending).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <utility>

#include "common.cuh"
#include "cpu/gather.h"
#include "parallel/thread_pool.h"
#include "runtime/runtime.cuh"
#include "streaming/engine.cuh"

namespace gp {

// A device's streams, events and pinned slots, created on its first streamed call and reused.
struct EngineState {
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
        capacity = 0;  // until every slot has its new size
        for (char *&slot : ring) {
            char *old = std::exchange(slot, nullptr);
            if (old) GP_CUDA_TRY(cudaFreeHost(old), err, "cudaFreeHost (staging)");
        }
        for (char *&slot : ring)
            GP_CUDA_TRY(cudaHostAlloc(reinterpret_cast<void **>(&slot), bytes, cudaHostAllocPortable), err,
                        "cudaHostAlloc (staging)");
        capacity = bytes;
        return 0;
    }
};

namespace {

// The engine's state for `device`, created on its first streamed call.
EngineState &engine_state(int device)
{
    DeviceState &state = device_state(device);
    std::call_once(state.engine_once, [&] { state.engine = new EngineState(); });
    return *state.engine;
}

// ---- host copy threads --------------------------------------------------------------------------

// The host threads one staging copy may use: GPUPRIMS_COPY_THREADS (read once; default
// StreamTuning::max_copy_threads), at most the pool's.
int copy_threads()
{
    static const int wanted = [] {
        long long threads = StreamTuning::max_copy_threads;
        const char *text = std::getenv("GPUPRIMS_COPY_THREADS");
        if (text != nullptr && *text != '\0') {
            char *end = nullptr;
            const long long value = std::strtoll(text, &end, 10);
            if (*end == '\0' && value >= 0) threads = value;
        }
        return static_cast<int>(std::max(1LL, std::min<long long>(threads, INT_MAX)));
    }();
    return std::max(1, std::min(wanted, gp_pool_threads()));
}

// Copies part `part` of `parts` of a box between the host view and its packed form.
void copy_box_part(const HostView &view, const Box &box, char *packed, bool to_packed, int part, int parts)
{
    const int64_t total = box.count() * view.elem;
    const int64_t alignment = StreamTuning::copy_part_alignment;
    int64_t begin = part == 0 ? 0 : (total * part / parts) & ~(alignment - 1);
    const int64_t end = part == parts - 1 ? total : (total * (part + 1) / parts) & ~(alignment - 1);
    const int64_t run = box.run_bytes(view);
    while (begin < end) {
        const int64_t r = begin / run, within = begin - r * run;
        const int64_t length = std::min(run - within, end - begin);
        const size_t at = box.run_offset(view, r) + static_cast<size_t>(within);
        if (view.gather != nullptr)  // an input view; parts split at 64 bytes, a multiple of elem
            gp_cpu_gather(view.gather, view.data, static_cast<int64_t>(at) / view.elem, length / view.elem,
                          packed + begin);
        else if (to_packed) std::memcpy(packed + begin, view.data + at, static_cast<size_t>(length));
        else std::memcpy(view.data + at, packed + begin, static_cast<size_t>(length));
        begin += length;
    }
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
        view_ = view;
        boxes_.assign(boxes.begin(), boxes.end());
        packed_ = packed;
        to_packed_ = to_packed;
        const size_t bytes = static_cast<size_t>(boxes_count(boxes) * view.elem);
        const int threads = view.gather != nullptr
                                ? std::max(1, gp_pool_threads() * StreamTuning::gather_thread_percent / 100)
                                : copy_threads();
        parts_ = static_cast<int>(std::min<size_t>(threads, 1 + bytes / StreamTuning::bytes_per_copy_part));
        gp_pool_start(parts_, copy_part, this);
        running_ = true;
    }

    void finish()
    {
        if (running_) gp_pool_finish();
        running_ = false;
    }

  private:
    static void copy_part(void *self, int part)
    {
        const BoxCopy &copy = *static_cast<const BoxCopy *>(self);
        char *at = copy.packed_;
        for (const Box &box : copy.boxes_) {
            copy_box_part(copy.view_, box, at, copy.to_packed_, part, copy.parts_);
            at += box.count() * copy.view_.elem;
        }
    }

    bool running_ = false;
    HostView view_{};
    Boxes boxes_;
    char *packed_ = nullptr;
    bool to_packed_ = false;
    int parts_ = 1;
};

// ---- copies between pinned host memory and the device --------------------------------------------

// An asynchronous copy between a pinned host view's box and packed device memory: one run, rows
// of runs, or slabs of rows of runs.
cudaError_t copy_box_async(const HostView &view, const Box &box, char *device, bool to_device, cudaStream_t stream)
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
cudaError_t copy_boxes_async(const HostView &view, const Boxes &boxes, char *device, bool to_device,
                             cudaStream_t stream)
{
    for (const Box &box : boxes) {
        const cudaError_t code = copy_box_async(view, box, device, to_device, stream);
        if (code != cudaSuccess) return code;
        device += box.count() * view.elem;
    }
    return cudaSuccess;
}

// ---- the pipeline -------------------------------------------------------------------------------

// The GPUPRIMS_STREAM_FAIL_TILE test hook: the tiler's tiles and computations, but the computation
// of tile `fail_tile` fails.  Installed only for calls whose plan names a tile.
class FailAtTile final : public Tiler {
  public:
    FailAtTile(Tiler &tiler, int64_t fail_tile) : Tiler(tiler.layout()), tiler_(tiler), fail_tile_(fail_tile) {}
    bool next(Tile *tile) override { return tiler_.next(tile); }
    int start(int device, gp_error *err) override { return tiler_.start(device, err); }
    int compute(int device, const Box &box, const void *device_in, void *device_out, Box *out_box,
                gp_error *err) override
    {
        if (tile_++ == fail_tile_)
            return gp_fail(err, GP_ERR_DEVICE, "streamed call failed at the tile GPUPRIMS_STREAM_FAIL_TILE names");
        return tiler_.compute(device, box, device_in, device_out, out_box, err);
    }
    int finish(int device, gp_error *err) override { return tiler_.finish(device, err); }

  private:
    Tiler &tiler_;
    int64_t fail_tile_, tile_ = 0;
};

// Streams the tiles through the ring, computing each on the work stream and copying results into
// the host result.
int run_pipeline(int device, EngineState &engine, Tiler &tiler, gp_error *err)
{
    constexpr int slots = EngineState::slots;
    const HostView &in = tiler.layout().in, &out = tiler.layout().out;
    const cudaStream_t work = work_stream();
    if (engine.create(err) ||
        (!in.pinned && EngineState::reserve(engine.pinned_in, engine.pinned_in_bytes, tiler.layout().in_slot, err)) ||
        (!out.pinned && EngineState::reserve(engine.pinned_out, engine.pinned_out_bytes, tiler.layout().out_slot, err)) ||
        tiler.start(device, err))
        return -1;
    // One allocation holds every slot's input and result (one pool call instead of 2 * slots:
    // host time before the first copy and after the last one is not overlapped with anything).
    constexpr int64_t alignment = StreamTuning::slot_alignment;
    const size_t in_stride = static_cast<size_t>(round_up(static_cast<int64_t>(tiler.layout().in_slot), alignment));
    const size_t out_stride = static_cast<size_t>(round_up(static_cast<int64_t>(tiler.layout().out_slot), alignment));
    DeviceBuffer device_slots;
    if (device_slots.allocate(slots * (in_stride + out_stride), err)) return -1;
    const auto device_in = [&](int s) { return device_slots.as<char>() + s * in_stride; };
    const auto device_out = [&](int s) { return device_slots.as<char>() + slots * in_stride + s * out_stride; };
    // Declared after the slots, so run before their (work-stream ordered) release on every failed
    // path out of here, which may leave copies in flight: the work stream waits for the copy
    // streams, on the device, without blocking the host.
    struct CopiesBeforeRelease {
        const EngineState &engine;
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
        int64_t tile;
        int slot;
        Box box;
    };
    std::deque<Pending> pending;  // results copied (or being copied) to pinned out slots
    BoxCopy copies;               // the copy threads' current job: staging the next tile's input
    // Waits for the pending results of tiles up to `last` and scatters them into the host result.
    auto deliver = [&](int64_t last) {
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
    auto stage = [&](int64_t tile, const Boxes &input) {
        if (in.pinned) return 0;
        const int s = static_cast<int>(tile % slots);
        GP_CUDA_TRY(cudaEventSynchronize(engine.in_copied[s]), err, "copy to device");
        copies.start(in, input, engine.pinned_in[s], true);
        return 0;
    };

    Tile current, next;
    bool more = tiler.next(&next);
    if (more && stage(0, next.input)) return -1;
    for (int64_t tile = 0; more; ++tile) {
        const int s = static_cast<int>(tile % slots);
        std::swap(current, next);
        copies.finish();
        // The copy threads stage the next tile while this one's copies and kernels are enqueued.
        more = tiler.next(&next);
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
        if (tiler.compute(device, current.box, device_in(s), device_out(s), &out_box, err)) return -1;
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
    if (deliver(INT64_MAX)) return -1;
    // The last result is out, so everything is done: each tile's copy out waits for its kernels,
    // which wait for its copy in and run in order.
    copies_before_release.all_done = true;
    return tiler.finish(device, err);
}

}  // namespace

int stream(int device, Tiler &tiler, const gp_stream_settings &settings, gp_error *err)
{
    EngineState &engine = engine_state(device);
    std::lock_guard<std::mutex> lock(engine.mutex);
    int status;
    if (settings.fail_tile >= 0) {
        FailAtTile failing(tiler, settings.fail_tile);
        status = run_pipeline(device, engine, failing, err);
    } else {
        status = run_pipeline(device, engine, tiler, err);
    }
    // After a failure the work stream waits for the copy streams' last work (run_pipeline's
    // CopiesBeforeRelease), so once it is idle, all three are.
    if (status != 0 && cudaStreamSynchronize(work_stream()) != cudaSuccess) cudaGetLastError();
    return status;
}

}  // namespace gp
