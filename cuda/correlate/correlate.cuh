// Internal interface of the correlate primitive (correlate.cu), for its streaming tiler
// (correlate_tiler.cu).
#pragma once

#include "contract/gp_call.h"
#include "contract/gp_error.h"

namespace gp {

// The correlation `args` of the image in device memory `in` into `out`, ordered on the work stream
// of `device` (current); the mask and fill value are host memory (args.mask, args.fill).
int launch_correlate(int device, const gp_correlate_args &args, const void *in, void *out, gp_error *err);

}  // namespace gp
