// Internal interface of the copy primitive (copy.cu), for its streaming tiler (copy_tiler.cu).
#pragma once

#include "contract/gp_call.h"
#include "contract/gp_error.h"

namespace gp {

// The copy `args` of the strided view at device address `in` (element (0, ..., 0)) into `out`,
// ordered on the work stream of the current device.
int launch_copy(const gp_copy_args &args, const void *in, void *out, gp_error *err);

}  // namespace gp
