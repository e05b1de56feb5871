/* The CUDA backend's C interface: every entry point is extern "C", takes the contract's plain
 * structs (csrc/contract/) and reports failures through gp_error, so csrc/ never sees a CUDA header
 * or a C++ type.  The primitives are reached through one entry, gp_cuda_run, which runs a planned
 * call; the rest serves device queries, gpuprims' memory and streams (DeviceArray), and pinned host
 * memory. */
#ifndef GPUPRIMS_CUDA_H
#define GPUPRIMS_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "contract/gp_call.h"
#include "contract/gp_error.h"
#include "contract/gp_plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- calls (run.cu) ---------------------------------------------------------------------------- */

/* Runs a call the planner routed to the GPU (GP_ROUTE_RESIDENT, _SHORT or _STREAMED) on
 * plan->device.  Resident calls are ordered on gpuprims' stream for the device and not waited for;
 * short and streamed calls return with their result in host memory.  With plan->repeats > 0 the call
 * is timed instead: a host input is uploaded once, then each of the `repeats` runs of the device
 * work (all its launches and workspace allocations) is bracketed by CUDA events and its
 * milliseconds written to times_ms[r]. */
int gp_cuda_run(const gp_call *call, const gp_plan *plan, float *times_ms, gp_error *err);

/* A box of a streamed call's (outer, n, inner) view: [o0, o0 + o_count) x [k0, k0 + k_count) x
 * [i0, i0 + i_count). */
typedef struct {
    int64_t o0, o_count, k0, k_count, i0, i_count;
} gp_box;
/* The tiles the streamed route would cut the call into under plan->stream, without running it or
 * touching a device (the tests check them): visit(ctx, box, inputs, input_count) for each tile in
 * order, where box is the box of the view the tile's computation is told about (reduce and scan: of
 * the input; correlate and copy: of the output) and inputs are the boxes of the input packed into the
 * tile's slot. */
typedef void (*gp_tile_visitor)(void *ctx, const gp_box *box, const gp_box *inputs, int64_t input_count);
int gp_cuda_stream_tiles(const gp_call *call, const gp_plan *plan, gp_tile_visitor visit, void *ctx,
                         gp_error *err);

/* ---- devices (runtime/devices.cu) -------------------------------------------------------------- */

typedef struct {
    char name[256];
    int major, minor;
    int multiprocessors;
    size_t total_memory;
    int driver_version, runtime_version;
} gp_cuda_device_props;

/* The number of usable devices; 0 with err->message saying why when there are none. */
int gp_cuda_device_count(gp_error *err);
int gp_cuda_device_props_get(int device, gp_cuda_device_props *props, gp_error *err);
/* The CUDA runtime version gpuprims was compiled against (e.g. 13000). */
int gp_cuda_compiled_runtime_version(void);

/* ---- device memory and streams (runtime/memory.cu, runtime/stream.cu) --------------------------- */

/* gpuprims' caching allocator, one stream-ordered pool per device.  gp_cuda_free returns the block
 * to the pool in stream order (work already enqueued on it finishes first); a failed free is reported
 * there, not by a later call. */
typedef struct {
    size_t in_use, reserved, peak_in_use; /* the pool's bytes: handed out, held, most handed out */
    size_t device_free, device_total;     /* the whole device, as cudaMemGetInfo */
} gp_cuda_memory;
int gp_cuda_alloc(int device, size_t bytes, void **ptr, gp_error *err);
int gp_cuda_free(int device, void *ptr, gp_error *err);
/* Waits for the device's stream first, so stream-ordered frees are counted. */
int gp_cuda_memory_info(int device, gp_cuda_memory *info, gp_error *err);
/* Waits for the device's stream, then releases every cached block the pool does not hand out, and
 * the cached pinned host blocks of dead streamed results. */
int gp_cuda_empty_cache(int device, gp_error *err);
/* The device a device (or managed) address belongs to; GP_ERR_INVALID for host memory. */
int gp_cuda_pointer_device(const void *ptr, int *device, gp_error *err);
/* A copy on the work stream between any host or device addresses; wait != 0 returns once done. */
int gp_cuda_memcpy(int device, void *dst, const void *src, size_t bytes, int wait, gp_error *err);

/* The work stream (one per device, shared by all host threads) and ordering with streams named the
 * DLPack / __cuda_array_interface__ way (1 legacy default, 2 per-thread default, else a
 * cudaStream_t). */
uintptr_t gp_cuda_work_stream(int device);
int gp_cuda_wait_for_stream(int device, uintptr_t producer, gp_error *err); /* ours waits */
int gp_cuda_signal_stream(int device, uintptr_t consumer, gp_error *err);   /* theirs waits */
int gp_cuda_synchronize(int device, gp_error *err);

/* ---- pinned host memory (pinned/pinned.cu) ------------------------------------------------------ */

/* Page-locked host memory, which the GPU's copy engines read and write at the bus's full speed.
 * host_alloc fails (err set) where no GPU is usable; with `cached` the block comes from (and
 * host_free returns it to) the cache of blocks for streamed results; *capacity is the block's size,
 * which host_free needs back.  host_is_pinned says whether [ptr, ptr + bytes) is page-locked memory
 * of any origin (gpuprims', CuPy's, PyTorch's, cudaHostRegister'ed).  pinned_result_fits: whether a
 * streamed result of `bytes` would get a cached block (one is free, or the blocks held by live
 * results stay within the cache's size with a new one). */
int gp_cuda_host_alloc(size_t bytes, int cached, void **ptr, size_t *capacity, gp_error *err);
int gp_cuda_host_free(void *ptr, size_t capacity, int cached, gp_error *err);
int gp_cuda_host_is_pinned(const void *ptr, size_t bytes);
int gp_cuda_pinned_result_fits(size_t bytes);

#ifdef __cplusplus
}
#endif

#endif
