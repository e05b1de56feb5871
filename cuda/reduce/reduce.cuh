// Internal interface of the reduce primitive (reduce.cu), for its streaming tiler (reduce_tiler.cu).
#pragma once

#include "contract/gp_call.h"
#include "contract/gp_error.h"

namespace gp {

// What a launch reads and writes: elements and results, or on either side the reduction's partial
// results (its accumulators: a streamed call's running results).
struct ReduceForm {
    bool partials_in = false;   // in holds partial results
    bool partials_out = false;  // out receives partial results
    int64_t index_base = 0;     // argmin/argmax: the index of the input's first row along n
};

// Reduces `args` over device memory: in holds outer * n * inner elements of in_dtype (or partial
// results), out receives outer * inner elements of out_dtype (or partial results).  Ordered on the
// work stream of `device` (current).
int launch_reduce(int device, const gp_reduce_args &args, const void *in, void *out, gp_error *err,
                  const ReduceForm &form = {});

// The bytes of one partial result of `args`, or -1 with err set.
int reduce_partial_bytes(const gp_reduce_args &args, gp_error *err);

}  // namespace gp
