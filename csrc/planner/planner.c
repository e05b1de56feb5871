/* gp_plan_call (planner.h): checks a call, reads the settings it needs, and picks its route. */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "planner/costs.h"
#include "planner/planner.h"
#ifndef GPUPRIMS_NO_CUDA
#include "gpuprims_cuda.h"
#endif

#ifdef GPUPRIMS_NO_CUDA

static int cuda_usable(void) { return 0; }

static int plan_gpu(const gp_call *call, const gp_primitive_row *row, const gp_traffic *t, int device,
                    const gp_environment *env, gp_plan *plan, gp_error *err)
{
    (void)call, (void)row, (void)t, (void)device, (void)env, (void)plan;
    return gp_fail(err, GP_ERR_INVALID, "gpuprims was built without CUDA support");
}

#else

/* The planner's own tuning.  Streamed results from min_pinned_result_bytes up go to cached pinned
 * blocks while the cache serves them (gp_cuda_pinned_result_fits), which the copy engine writes at the bus's full speed (writing
 * a fresh 256 MiB NumPy array costs ~60 ms of page faults on the H200 machine, more than the whole
 * streamed call); smaller results are not worth a block. */
static const size_t min_pinned_result_bytes = (size_t)1 << 20;

static int cuda_usable(void)
{
    gp_error ignored;
    return gp_cuda_device_count(&ignored) > 0;
}

/* A non-negative integer setting, or `fallback` when unset or unreadable. */
static long long setting_integer(const char *text, long long fallback)
{
    if (text == NULL || *text == '\0') return fallback;
    char *end = NULL;
    const long long value = strtoll(text, &end, 10);
    return (*end == '\0' && value >= 0) ? value : fallback;
}

/* The settings of a GPU call on host data (see gp_environment). */
typedef struct {
    gp_stream_settings stream;
    double stream_min_bytes;
} gpu_settings;

static gpu_settings read_gpu_settings(const gp_environment *env, const gp_primitive_costs *costs)
{
    gpu_settings s;
    s.stream.max_device_bytes = (size_t)setting_integer(env->max_device_bytes, LLONG_MAX);
    s.stream.chunk_bytes = (size_t)setting_integer(env->stream_chunk_bytes, 0);
    s.stream.fail_tile = setting_integer(env->stream_fail_tile, -1);
    s.stream_min_bytes = (double)setting_integer(env->stream_min_bytes, (long long)costs->stream_min_bytes);
    return s;
}

/* The GPU route of a host call: streamed from the primitive's crossover on, or when the short
 * path's copies and workspace would not fit the device memory the call may use. */
static gp_route gpu_route(const gp_primitive_row *row, const gpu_settings *s, const gp_traffic *t)
{
    if (!row->streams) return GP_ROUTE_SHORT;
    const double short_path_bytes = (double)t->in_bytes + (double)t->out_bytes +
                                    (double)t->elements * GP_WORKSPACE_BYTES_PER_ELEMENT;
    return (double)t->in_bytes >= s->stream_min_bytes || short_path_bytes > (double)s->stream.max_device_bytes
               ? GP_ROUTE_STREAMED
               : GP_ROUTE_SHORT;
}

/* Whether the DMA may read the input where it lies: contiguous page-locked memory (a strided view is
 * gathered through the staging slots wherever it lies). */
static int input_pinned(const gp_call *call, const gp_traffic *t)
{
    return call->in_view == NULL && t->in_bytes > 0 &&
           gp_cuda_host_is_pinned((const char *)call->in - t->in_offset, t->in_bytes);
}

/* Whether a streamed result goes to page-locked memory: the caller's (call->out, given before
 * planning) when it is pinned, else a cached pinned block when out_bytes is worth one. */
static int result_pinnable(const gp_call *call, gp_route route, size_t out_bytes)
{
    if (route != GP_ROUTE_STREAMED) return 0;
    if (call->out != NULL) return gp_cuda_host_is_pinned(call->out, out_bytes);
    return out_bytes >= min_pinned_result_bytes && gp_cuda_pinned_result_fits(out_bytes);
}

/* Device GP_DEVICE_AUTO: whether the GPU finishes first.  The input's pinning is asked only when the
 * answer could change the choice: the GPU is costed first as if the input were pinned. */
static int gpu_wins(const gp_costs *costs, const gp_call *call, const gp_traffic *t, gp_route route, gp_plan *plan,
                    int *pinned)
{
    const int result_pinned = result_pinnable(call, route, t->out_bytes);
    plan->cpu_us = gp_cost_cpu_us(costs, call->primitive, t);
    plan->cuda_us = gp_cost_cuda_us(costs, call->primitive, t, route, 1, result_pinned);
    if (plan->cpu_us <= plan->cuda_us) return 0;
    *pinned = input_pinned(call, t);
    if (!*pinned) plan->cuda_us = gp_cost_cuda_us(costs, call->primitive, t, route, 0, result_pinned);
    return plan->cuda_us < plan->cpu_us;
}

/* A host call on the GPU (`device`), or with GP_DEVICE_AUTO wherever it finishes first. */
static int plan_gpu(const gp_call *call, const gp_primitive_row *row, const gp_traffic *t, int device,
                    const gp_environment *env, gp_plan *plan, gp_error *err)
{
    gp_costs costs;
    if (gp_costs_current(&costs, env->costs, err)) return -1;
    const gpu_settings settings = read_gpu_settings(env, &costs.primitive[call->primitive]);
    /* Timing uploads the input once and times the device work, as the short path runs it. */
    const gp_route route = plan->repeats > 0 ? GP_ROUTE_SHORT : gpu_route(row, &settings, t);
    int pinned = -1; /* not asked yet */
    if (device == GP_DEVICE_AUTO) {
        if (plan->repeats == 0 && row->cpu != NULL && !gpu_wins(&costs, call, t, route, plan, &pinned)) return 0;
        device = 0;
    }
    plan->route = route;
    plan->device = device;
    plan->stream = settings.stream;
    /* The engine reads a pinned input directly; the short path's copy need not know. */
    plan->input_pinned = route == GP_ROUTE_STREAMED && (pinned >= 0 ? pinned : input_pinned(call, t));
    plan->result_pinned = plan->repeats == 0 && result_pinnable(call, route, t->out_bytes);
    return 0;
}

#endif

/* Whether the result the glue allocates (no `out` given) in pageable memory is large enough to come
 * in fresh pages, which are then faulted in on every pool thread before a host backend writes it
 * (the CPU backend, or the streamed route's copy threads). */
static int touches_result(const gp_call *call, const gp_plan *plan)
{
    return plan->repeats == 0 && call->out == NULL && !plan->result_pinned && plan->out_bytes >= GP_FRESH_MIN_BYTES &&
           (plan->route == GP_ROUTE_CPU || plan->route == GP_ROUTE_STREAMED);
}

/* The route, then what follows from it. */
static int plan_host_call(const gp_call *call, const gp_primitive_row *row, const gp_traffic *t, int device,
                          const gp_environment *env, gp_plan *plan, gp_error *err)
{
    if (device == GP_DEVICE_AUTO && !cuda_usable()) device = GP_DEVICE_CPU;
    if (device != GP_DEVICE_CPU) {
        if (plan_gpu(call, row, t, device, env, plan, err)) return -1;
    } else if (row->cpu == NULL) {
        return gp_fail(err, GP_ERR_INVALID, "this primitive runs on device data only");
    }
    plan->touch_result = touches_result(call, plan);
    return 0;
}

int gp_plan_call(const gp_call *call, int device, int resident, int repeats, const gp_environment *env, gp_plan *plan,
                 gp_error *err)
{
    if ((int)call->primitive < 0 || call->primitive >= GP_NUM_PRIMITIVES)
        return gp_fail(err, GP_ERR_INVALID, "unknown primitive");
    if (device < 0 && device != GP_DEVICE_CPU && device != GP_DEVICE_AUTO)
        return gp_fail(err, GP_ERR_INVALID, "invalid device index");
    const gp_primitive_row *row = &gp_primitives[call->primitive];
    if (row->check(call, err)) return -1;
    const gp_traffic t = row->traffic(call);
    *plan = (gp_plan){.route = GP_ROUTE_CPU,
                      .device = GP_DEVICE_CPU,
                      .in_bytes = t.in_bytes,
                      .out_bytes = t.out_bytes,
                      .in_offset = t.in_offset,
                      .stream = {SIZE_MAX, 0, -1},
                      .repeats = repeats > 0 ? repeats : 0};
    if (resident) {
        if (device < 0) return gp_fail(err, GP_ERR_INVALID, "device-resident data needs a CUDA device");
        plan->route = GP_ROUTE_RESIDENT;
        plan->device = device;
        return 0;
    }
    return plan_host_call(call, row, &t, device, env, plan, err);
}

const char *gp_primitive_name(gp_primitive primitive)
{
    return (int)primitive >= 0 && primitive < GP_NUM_PRIMITIVES ? gp_primitives[primitive].name : "?";
}

const char *gp_route_name(gp_route route)
{
    static const char *const names[GP_NUM_ROUTES] = {"cpu", "cuda-resident", "cuda", "cuda-streamed"};
    return (int)route >= 0 && route < GP_NUM_ROUTES ? names[route] : "?";
}
