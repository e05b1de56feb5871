// The one call entry of the CUDA backend: gp_cuda_run runs a planned call on its route, through the
// primitive table (one row per primitive: its resident launch and its streaming tiler), and times it
// for the benchmark; gp_cuda_stream_tiles lists the tiles a streamed call would be cut into.
//   resident: the primitive's launch on the call's device pointers;
//   short:    the input's span copied to the device, the resident launch, the result copied back;
//   streamed: the primitive's tiler through the streaming engine (streaming/engine.cuh).
#include <memory>
#include <vector>

#include "gpuprims_cuda.h"
#include "primitives.cuh"
#include "runtime/runtime.cuh"
#include "streaming/engine.cuh"

namespace gp {
namespace {

// ---- the primitive table ----------------------------------------------------------------------------

struct Primitive {
    gp_primitive primitive;
    ResidentLaunch resident;
    TilerFactory tiler;  // null: the primitive has no streamed form
};

constexpr Primitive primitives[] = {
    {GP_REDUCE, reduce_resident, reduce_tiler},
    {GP_SCAN, scan_resident, scan_tiler},
    {GP_CORRELATE, correlate_resident, correlate_tiler},
    {GP_COPY, copy_resident, copy_tiler},
    {GP_CONVERT, convert_resident, nullptr},
};

constexpr bool rows_in_order()
{
    for (int p = 0; p < GP_NUM_PRIMITIVES; ++p)
        if (primitives[p].primitive != p) return false;
    return true;
}
static_assert(sizeof primitives / sizeof primitives[0] == GP_NUM_PRIMITIVES, "one row per primitive");
static_assert(rows_in_order(), "the rows follow gp_primitive");

// The call's row, or null with err set for an unknown primitive.
const Primitive *find_row(const gp_call &call, gp_error *err)
{
    if (static_cast<int>(call.primitive) < 0 || call.primitive >= GP_NUM_PRIMITIVES) {
        fail(err, GP_ERR_INVALID, "unknown primitive");
        return nullptr;
    }
    return &primitives[call.primitive];
}

// The primitive's streamed form of the call, or null with err set.
std::unique_ptr<Tiler> tiler_for(const Primitive &row, const gp_call &call, const gp_plan &plan, gp_error *err)
{
    if (row.tiler == nullptr) {
        fail(err, GP_ERR_INVALID, "this primitive has no streamed form");
        return nullptr;
    }
    return row.tiler(call, plan, err);
}

// ---- the short route --------------------------------------------------------------------------------

// Device copies of a host call's operands: the input's span (plan.in_bytes, from plan.in_offset
// bytes before call.in) uploaded on the work stream, and room for the result (plan.out_bytes);
// `call` is the call on them.  Released on every path.
struct DeviceOperands {
    DeviceBuffer in, out;
    gp_call call;

    int upload(const gp_call &host, const gp_plan &plan, gp_error *err)
    {
        if (in.allocate(plan.in_bytes, err) || out.allocate(plan.out_bytes, err)) return -1;
        GP_CUDA_TRY(cudaMemcpyAsync(in.as<void>(), static_cast<const char *>(host.in) - plan.in_offset, plan.in_bytes,
                                    cudaMemcpyHostToDevice, work_stream()),
                    err, "copy to device");
        call = host;
        call.in = in.as<const char>() + plan.in_offset;
        call.out = out.as<void>();
        return 0;
    }
};

// One copy each way: upload, run the resident launch, copy the result back, wait.
int run_short(int device, const Primitive &row, const gp_call &call, const gp_plan &plan, gp_error *err)
{
    DeviceOperands operands;
    if (operands.upload(call, plan, err) || row.resident(device, operands.call, err)) return -1;
    GP_CUDA_TRY(cudaMemcpyAsync(call.out, operands.out.as<void>(), plan.out_bytes, cudaMemcpyDeviceToHost,
                                work_stream()),
                err, "copy to host");
    return synchronize(err, "waiting for the device");
}

// ---- timing -----------------------------------------------------------------------------------------

// Owns a pair of events.
class EventPair {
  public:
    EventPair() = default;
    EventPair(const EventPair &) = delete;
    EventPair &operator=(const EventPair &) = delete;
    ~EventPair()
    {
        for (cudaEvent_t event : {start, stop})
            if (event != nullptr && cudaEventDestroy(event) != cudaSuccess) cudaGetLastError();
    }
    int create(gp_error *err)
    {
        GP_CUDA_TRY(cudaEventCreate(&start), err, "cudaEventCreate");
        GP_CUDA_TRY(cudaEventCreate(&stop), err, "cudaEventCreate");
        return 0;
    }
    cudaEvent_t start = nullptr, stop = nullptr;
};

// Times `repeats` calls of run() (after one untimed warm-up) and writes milliseconds to ms.
template <class F> int time_repeats(int repeats, float *ms, gp_error *err, F &&run)
{
    EventPair events;
    if (events.create(err) || run()) return -1;
    for (int r = 0; r < repeats; ++r) {
        GP_CUDA_TRY(cudaEventRecord(events.start, work_stream()), err, "cudaEventRecord");
        if (run()) return -1;
        GP_CUDA_TRY(cudaEventRecord(events.stop, work_stream()), err, "cudaEventRecord");
        GP_CUDA_TRY(cudaEventSynchronize(events.stop), err, "cudaEventSynchronize");
        GP_CUDA_TRY(cudaEventElapsedTime(&ms[r], events.start, events.stop), err, "cudaEventElapsedTime");
    }
    return 0;
}

// Times the call's device work (its resident launch, with all its launches and workspace
// allocations): on the call's own device pointers, or on device copies of its host operands,
// uploaded once.
int time_call(int device, const Primitive &row, const gp_call &call, const gp_plan &plan, float *ms, gp_error *err)
{
    DeviceOperands operands;
    if (plan.route != GP_ROUTE_RESIDENT && operands.upload(call, plan, err)) return -1;
    const gp_call &timed = plan.route == GP_ROUTE_RESIDENT ? call : operands.call;
    if (time_repeats(plan.repeats, ms, err, [&] { return row.resident(device, timed, err); })) return -1;
    return synchronize(err, "timing");
}

}  // namespace
}  // namespace gp

extern "C" int gp_cuda_run(const gp_call *call, const gp_plan *plan, float *times_ms, gp_error *err)
{
    using namespace gp;
    const Primitive *row = find_row(*call, err);
    if (row == nullptr || use_device(plan->device, err)) return -1;
    if (plan->repeats > 0) return time_call(plan->device, *row, *call, *plan, times_ms, err);
    switch (plan->route) {
    case GP_ROUTE_RESIDENT: return row->resident(plan->device, *call, err);
    case GP_ROUTE_SHORT: return run_short(plan->device, *row, *call, *plan, err);
    case GP_ROUTE_STREAMED: {
        const std::unique_ptr<Tiler> tiler = tiler_for(*row, *call, *plan, err);
        return tiler ? stream(plan->device, *tiler, plan->stream, err) : -1;
    }
    default: return fail(err, GP_ERR_INVALID, "a call the planner did not route to the GPU reached the CUDA backend");
    }
}

extern "C" int gp_cuda_stream_tiles(const gp_call *call, const gp_plan *plan, gp_tile_visitor visit, void *ctx,
                                    gp_error *err)
{
    using namespace gp;
    const Primitive *row = find_row(*call, err);
    if (row == nullptr) return -1;
    const std::unique_ptr<Tiler> tiler = tiler_for(*row, *call, *plan, err);
    if (!tiler) return -1;
    const auto as_box = [](const Box &box) {
        return gp_box{box.o0, box.o_count, box.k0, box.k_count, box.i0, box.i_count};
    };
    Tile tile;
    std::vector<gp_box> inputs;
    while (tiler->next(&tile)) {
        const gp_box box = as_box(tile.box);
        inputs.clear();
        for (const Box &input : tile.input) inputs.push_back(as_box(input));
        visit(ctx, &box, inputs.data(), static_cast<int64_t>(inputs.size()));
    }
    return 0;
}
