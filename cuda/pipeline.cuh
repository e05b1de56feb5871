// Internal interface of the streaming engine (pipeline.cu): how the host entry points of reduce,
// scan, convolution and transpose decide between the short path (with_device_copies) and
// streaming, and the streamed forms themselves.  See pipeline.cu for the design.
#pragma once

#include "gpuprims_cuda.h"
#include "runtime.cuh"

namespace gp {

// Whether a host call of `op` moving in_bytes in and out_bytes out (count elements) streams: when
// its input is large enough to gain from the pipeline (StreamTuning::min_stream_bytes, or
// GPUPRIMS_STREAM_MIN_BYTES) or when the short path's copies would pass GPUPRIMS_MAX_DEVICE_BYTES.
bool should_stream(gp_streamed_op op, size_t in_bytes, size_t out_bytes, int64_t count);

// Streamed forms of gp_cuda_reduce and gp_cuda_scan (same descriptors, host pointers).
int stream_reduce(int device, const gp_reduce_desc *desc, gp_error *err);
int stream_scan(int device, const gp_scan_desc *desc, gp_error *err);
// Streamed forms of gp_cuda_correlate and gp_cuda_copy_strided (the copy's source view dense).
int stream_correlate(int device, const gp_correlate_desc *desc, gp_error *err);
int stream_copy_strided(int device, const gp_copy_desc *desc, gp_error *err);

// Frees the cached pinned blocks of dead streamed results (gp_cuda_empty_cache).
void release_pinned_results();

// scan.cu: gp_cuda_scan_resident where every (outer, inner) row starts from carry_in[row] (null:
// from 0) and leaves its total in carry_out[row] (null: not kept).  Carries are device arrays of
// outer * inner accumulators (float for float16 results, else the result dtype).
int scan_resident_carried(int device, const gp_scan_desc *desc, const void *carry_in,
                          void *carry_out, gp_error *err);

}  // namespace gp
