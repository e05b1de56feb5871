/* The CUDA backend's C interface: every entry point is extern "C", takes plain structs and reports
 * failures through gp_error, so csrc/ never sees a CUDA header or a C++ type.
 *
 * "Host" entry points take host pointers in their descriptors and do the transfers themselves;
 * "resident" ones take device pointers and only launch work on gpuprims' stream. */
#ifndef GPUPRIMS_CUDA_H
#define GPUPRIMS_CUDA_H

#include <stddef.h>
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

/* convolve.cu: correlation (convolution is correlation with the mask reversed).  desc->mask and
 * desc->fill are host pointers in both forms; the resident form takes device in and out. */
int gp_cuda_correlate(int device, const gp_correlate_desc *desc, gp_error *err);
int gp_cuda_correlate_resident(int device, const gp_correlate_desc *desc, gp_error *err);

/* timing.cu: for the benchmark.  Uploads the descriptor's host input once, then times `repeats`
 * runs of the resident entry point (or a device-to-device copy of nbytes) with CUDA events. */
int gp_cuda_time_reduce(int device, const gp_reduce_desc *desc, int repeats, float *ms, gp_error *err);
int gp_cuda_time_scan(int device, const gp_scan_desc *desc, int repeats, float *ms, gp_error *err);
int gp_cuda_time_correlate(int device, const gp_correlate_desc *desc, int repeats, float *ms,
                           gp_error *err);
int gp_cuda_time_memcpy(int device, size_t nbytes, int repeats, float *ms, gp_error *err);

#ifdef __cplusplus
}
#endif

#endif
