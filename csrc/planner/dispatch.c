/* gp_run_call (planner.h): hands a planned call to the CPU backend or the CUDA backend. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <time.h>

#include "parallel/first_touch.h"
#include "planner/planner.h"
#include "planner/primitives.h"
#ifndef GPUPRIMS_NO_CUDA
#include "gpuprims_cuda.h"
#endif

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* The CPU backend, or its times: one untimed run first, as the GPU's timing does. */
static int run_on_cpu(const gp_call *call, const gp_plan *plan, float *times_ms, gp_error *err)
{
    const gp_primitive_row *row = &gp_primitives[call->primitive];
    if (row->cpu(call, err)) return -1;
    for (int r = 0; r < plan->repeats; ++r) {
        const double start = now_ms();
        if (row->cpu(call, err)) return -1;
        times_ms[r] = (float)(now_ms() - start);
    }
    return 0;
}

int gp_run_call(const gp_call *call, const gp_plan *plan, float *times_ms, gp_error *err)
{
    if (plan->in_bytes == 0 && plan->out_bytes == 0) { /* an empty copy or conversion */
        for (int r = 0; r < plan->repeats; ++r) times_ms[r] = 0.0f;
        return 0;
    }
    if (plan->touch_result) gp_first_touch(call->out, plan->out_bytes);
    if (plan->route == GP_ROUTE_CPU) return run_on_cpu(call, plan, times_ms, err);
#ifdef GPUPRIMS_NO_CUDA
    return gp_fail(err, GP_ERR_INVALID, "gpuprims was built without CUDA support");
#else
    return gp_cuda_run(call, plan, times_ms, err);
#endif
}
