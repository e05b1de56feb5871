/* A call's plan: how the call runs, decided once by the planner (csrc/planner/) before anything is
 * allocated, and carried down to the backend that runs it.  CUB's two-phase call is the model:
 * first plan (which also sizes the host output), then run. */
#ifndef GP_PLAN_H
#define GP_PLAN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where a call runs: the CPU backend; a GPU, on device-resident data (resident), after one copy
 * each way (short), or streamed in tiles through pinned staging buffers (streamed). */
typedef enum { GP_ROUTE_CPU, GP_ROUTE_RESIDENT, GP_ROUTE_SHORT, GP_ROUTE_STREAMED, GP_NUM_ROUTES } gp_route;

/* A call's device request: a CUDA device index, or the CPU, or "wherever it finishes first". */
enum { GP_DEVICE_CPU = -1, GP_DEVICE_AUTO = -2 };

/* Device bytes per element a GPU call needs beyond its input and output (carries, kernel
 * workspace): the planner's check that a short path fits GPUPRIMS_MAX_DEVICE_BYTES and the
 * engine's tile sizes both count it. */
enum { GP_WORKSPACE_BYTES_PER_ELEMENT = 2 };

/* The streaming settings of one call, read from the environment once by the planner. */
typedef struct {
    size_t max_device_bytes; /* GPUPRIMS_MAX_DEVICE_BYTES: device memory the call may use */
    size_t chunk_bytes;      /* GPUPRIMS_STREAM_CHUNK_BYTES: input bytes per tile */
    int64_t fail_tile;       /* GPUPRIMS_STREAM_FAIL_TILE: test hook, the call fails at this tile (< 0: never) */
} gp_stream_settings;

typedef struct {
    gp_route route;
    int device;                 /* the CUDA device of the GPU routes */
    int input_pinned;           /* a host input in page-locked memory (asked only where it matters) */
    int result_pinned;          /* a host result in one of gpuprims' cached pinned blocks */
    int touch_result;           /* a new pageable host result whose pages are faulted in on every pool
                                 * thread before the run (csrc/parallel/first_touch.h) */
    size_t in_bytes, out_bytes; /* what the call reads (the span of a strided input) and writes */
    size_t in_offset;           /* bytes from the start of the input's span to call->in */
    double cpu_us, cuda_us;     /* the cost model's estimates, when it chose the route (else 0) */
    gp_stream_settings stream;
    int repeats;                /* > 0: time `repeats` runs of the call's work instead of one run */
} gp_plan;

#ifdef __cplusplus
}
#endif

#endif
