// Internal interface of the reduce primitive (reduce.cu), for its streaming tiler (reduce_tiler.cu).
#pragma once

#include "contract/gp_call.h"
#include "contract/gp_error.h"

namespace gp {

// Reduces `args` over device memory: in holds outer * n * inner elements of in_dtype, out receives
// outer * inner elements of out_dtype.  Ordered on the work stream of `device` (current).
int launch_reduce(int device, const gp_reduce_args &args, const void *in, void *out, gp_error *err);

}  // namespace gp
