// Internal interface of the scan primitive (scan.cu), for its streaming tiler (scan_tiler.cu): the
// scan of device memory that starts every row from a carry and leaves the row's total in another.
#pragma once

#include "contract/gp_call.h"
#include "contract/gp_error.h"

namespace gp {

// The prefix sum `args` over device memory, ordered on the work stream of `device` (current), where
// every (outer, inner) row starts from carry_in[row] (null: from 0) and leaves its total in
// carry_out[row] (null: not kept).  Carries are device arrays of outer * inner values of the
// partial dtype (gp_partial_dtype(args.out_dtype)); they may not overlap.
int launch_scan(int device, const gp_scan_args &args, const void *in, void *out, const void *carry_in,
                void *carry_out, gp_error *err);

}  // namespace gp
