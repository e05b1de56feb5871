/* The planner: every call is planned once, then run (CUB's two-phase call is the model).
 *
 * gp_plan_call checks a call and decides everything about how it runs: the route (the CPU backend, a
 * GPU on resident data, the GPU's short path, or GPU streaming), whether a host input is pinned and a
 * host result should be, the bytes that move, and the streaming settings.  For host inputs with
 * device GP_DEVICE_AUTO it picks the route that finishes first by the cost model (costs.c).  The
 * glue then allocates the output the plan describes and calls gp_run_call, which hands the call to
 * the backend the route names.  Python-free: the glue (csrc/glue/) turns arrays into calls and
 * errors into exceptions. */
#ifndef GP_PLANNER_H
#define GP_PLANNER_H

#include "contract/gp_call.h"
#include "contract/gp_error.h"
#include "contract/gp_plan.h"
#include "planner/environment.h"

/* Plans `call` (whose in is set; out is NULL, or for a host call the memory the caller gave for
 * the result).  device: a CUDA device index, GP_DEVICE_CPU or GP_DEVICE_AUTO; resident: in and out
 * are device addresses on `device`; repeats: see gp_plan.repeats; env: the call's settings (read
 * once per call by the caller; only a GPU plan for host data reads them). */
int gp_plan_call(const gp_call *call, int device, int resident, int repeats, const gp_environment *env, gp_plan *plan,
                 gp_error *err);

/* Runs a planned call on the backend its route names; with plan->repeats > 0 writes the
 * milliseconds of each run of its work to times_ms instead.  Calls with nothing to do return at
 * once. */
int gp_run_call(const gp_call *call, const gp_plan *plan, float *times_ms, gp_error *err);

/* The names explain() shows: "reduce", ...; "cpu", "cuda-resident", "cuda", "cuda-streamed". */
const char *gp_primitive_name(gp_primitive primitive);
const char *gp_route_name(gp_route route);

#endif
