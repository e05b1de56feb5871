// Internal interface of the convert primitive (convert.cu), for the reduction's tiler, which converts
// its running results into the result dtype.
#pragma once

#include "contract/gp_call.h"
#include "contract/gp_error.h"

namespace gp {

// out[i] = (out_dtype)(in[i] / divisor) for i < count, over device memory, ordered on the work
// stream of `device` (current).  See gp_convert_args.
int launch_convert(int device, const gp_convert_args &args, const void *in, void *out, gp_error *err);

}  // namespace gp
