// Internal interface of the scan primitive (scan.cu), for its streaming tiler (scan_tiler.cu): the
// scan of device memory that starts every row from a carry and leaves the row's total in another.
#pragma once

#include "contract/gp_call.h"
#include "contract/gp_error.h"

namespace gp {

// The scan `args` over device memory, ordered on the work stream of `device` (current), where every
// (outer, inner) row starts from carry_in[row] (null: from the operator's identity) and leaves its
// total in carry_out[row] (null: not kept).  Carries are device arrays of outer * inner values of
// the scan's accumulator, scan_carry_size(args) bytes each; they may not overlap.
int launch_scan(int device, const gp_scan_args &args, const void *in, void *out, const void *carry_in,
                void *carry_out, gp_error *err);

// Bytes of one carry of the scan `args` (0 with err set for a scan the backend does not run).
int64_t scan_carry_size(const gp_scan_args &args, gp_error *err);

}  // namespace gp
