/* The CUDA backend's C interface: every entry point is extern "C", takes plain structs and reports
 * failures through gp_error, so csrc/ never sees a CUDA header or a C++ type.
 *
 * "Host" entry points take host pointers in their descriptors and do the transfers themselves;
 * "resident" ones take device pointers and only launch work on gpuprims' stream. */
#ifndef GPUPRIMS_CUDA_H
#define GPUPRIMS_CUDA_H

#include <stddef.h>
#include <stdint.h>
#include "gp_types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    char name[256];
    int major, minor;
    int multiprocessors;
    size_t total_memory;
    int driver_version, runtime_version;
} gp_cuda_device_props;

/* device.cu: number of usable devices; 0 with err->message saying why when there are none. */
int gp_cuda_device_count(gp_error *err);
int gp_cuda_device_props_get(int device, gp_cuda_device_props *props, gp_error *err);
/* The CUDA runtime version gpuprims was compiled against (e.g. 13000). */
int gp_cuda_compiled_runtime_version(void);

/* reduce.cu / scan.cu: host-memory descriptors. */
int gp_cuda_reduce(int device, const gp_reduce_desc *desc, gp_error *err);
int gp_cuda_scan(int device, const gp_scan_desc *desc, gp_error *err);

/* Device-resident descriptors; the work is ordered on gpuprims' stream for the device. */
int gp_cuda_reduce_resident(int device, const gp_reduce_desc *desc, gp_error *err);
int gp_cuda_scan_resident(int device, const gp_scan_desc *desc, gp_error *err);

/* memory.cu: gpuprims' caching allocator, one stream-ordered pool per device.  gp_cuda_free
 * returns the block to the pool in stream order (work already enqueued on it finishes first). */
typedef struct {
    size_t in_use, reserved, peak_in_use;  /* the pool's bytes: handed out, held, most handed out */
    size_t device_free, device_total;      /* the whole device, as cudaMemGetInfo */
} gp_cuda_memory;
int gp_cuda_alloc(int device, size_t bytes, void **ptr, gp_error *err);
void gp_cuda_free(int device, void *ptr);
/* Waits for the device's stream first, so stream-ordered frees are counted. */
int gp_cuda_memory_info(int device, gp_cuda_memory *info, gp_error *err);
/* Waits for the device's stream, then releases every cached block the pool does not hand out, and
 * the cached pinned host blocks of dead streamed results. */
int gp_cuda_empty_cache(int device, gp_error *err);
/* The device a device (or managed) address belongs to; GP_ERR_INVALID for host memory. */
int gp_cuda_pointer_device(const void *ptr, int *device, gp_error *err);
/* A copy on the work stream between any host or device addresses; wait != 0 returns once done. */
int gp_cuda_memcpy(int device, void *dst, const void *src, size_t bytes, int wait, gp_error *err);

/* pipeline.cu: page-locked (pinned) host memory, which the GPU's copy engines read and write at
 * the bus's full speed; gpuprims' host entry points skip their staging copy for it.  host_alloc
 * fails (err set) where no GPU is usable; with `cached` the block comes from (and host_free
 * returns it to) a cache of blocks for streamed results; *capacity is the block's size, which
 * host_free needs back.  host_is_pinned says whether [ptr, ptr + bytes) is page-locked memory of
 * any origin (gpuprims', CuPy's, PyTorch's, cudaHostRegister'ed).  pinned_result_wanted: whether
 * a host call of `op` with these sizes streams with a result the cache of pinned blocks serves
 * (from 1 MiB to the cache's 1 GiB). */
int gp_cuda_host_alloc(size_t bytes, int cached, void **ptr, size_t *capacity, gp_error *err);
void gp_cuda_host_free(void *ptr, size_t capacity, int cached);
int gp_cuda_host_is_pinned(const void *ptr, size_t bytes);
int gp_cuda_pinned_result_wanted(gp_streamed_op op, size_t in_bytes, size_t out_bytes, int64_t count);

/* stream.cu: the work stream (one per device, shared by all host threads) and ordering with
 * streams named the DLPack / __cuda_array_interface__ way (1 legacy default, 2 per-thread
 * default, else a cudaStream_t). */
uintptr_t gp_cuda_work_stream(int device);
int gp_cuda_wait_for_stream(int device, uintptr_t producer, gp_error *err);  /* ours waits */
int gp_cuda_signal_stream(int device, uintptr_t consumer, gp_error *err);    /* theirs waits */
int gp_cuda_synchronize(int device, gp_error *err);

/* convert.cu: out[i] = (out_dtype)(in[i] / divisor) for i < count, NumPy's casting (float to
 * integer truncates, anything to bool is != 0); divisor 0 means no division (float inputs only
 * are divided, in their own precision, as numpy.true_divide by a Python int). */
int gp_cuda_convert_resident(int device, gp_dtype in_dtype, const void *in, gp_dtype out_dtype,
                             void *out, int64_t count, int64_t divisor, gp_error *err);

/* transpose.cu: C-contiguous copy of a strided view (see gp_copy_desc), e.g. a permuted array.
 * The host variant copies the span of memory the view covers to the device, and the result back. */
int gp_cuda_copy_strided(int device, const gp_copy_desc *desc, gp_error *err);
int gp_cuda_copy_strided_resident(int device, const gp_copy_desc *desc, gp_error *err);

/* convolve.cu: correlation (convolution is correlation with the mask reversed).  desc->mask and
 * desc->fill are host pointers in both forms; the resident form takes device in and out. */
int gp_cuda_correlate(int device, const gp_correlate_desc *desc, gp_error *err);
int gp_cuda_correlate_resident(int device, const gp_correlate_desc *desc, gp_error *err);

/* timing.cu: for the benchmark.  Uploads the descriptor's host input once, then times `repeats`
 * runs of the resident entry point (or a device-to-device copy of nbytes) with CUDA events. */
int gp_cuda_time_reduce(int device, const gp_reduce_desc *desc, int repeats, float *ms, gp_error *err);
int gp_cuda_time_scan(int device, const gp_scan_desc *desc, int repeats, float *ms, gp_error *err);
int gp_cuda_time_copy_strided(int device, const gp_copy_desc *desc, int repeats, float *ms, gp_error *err);

int gp_cuda_time_correlate(int device, const gp_correlate_desc *desc, int repeats, float *ms,
                           gp_error *err);
int gp_cuda_time_memcpy(int device, size_t nbytes, int repeats, float *ms, gp_error *err);
/* A host-to-device copy of nbytes from `host` (pageable or pinned) into a device buffer. */
int gp_cuda_time_host_to_device(int device, const void *host, size_t nbytes, int repeats, float *ms,
                                gp_error *err);

#ifdef __cplusplus
}
#endif

#endif
