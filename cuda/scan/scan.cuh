// Internal interface of the scan primitive (scan.cu), for its streaming tiler (scan_tiler.cu): the
// scan of device memory that starts every row from a carry and leaves the row's total in another.
#pragma once

#include "contract/gp_call.h"
#include "contract/gp_error.h"

namespace gp {

class DeviceBuffer;  // runtime/runtime.cuh

// The scan `args` over device memory, ordered on the work stream of `device` (current), where every
// (outer, inner) row starts from carry_in[row] (null: from the operator's identity) and leaves its
// total in carry_out[row] (null: not kept).  Carries are device arrays of outer * inner values of
// the scan's accumulator, scan_carry_size(args) bytes each; they may not overlap.  args.initial
// is not read here: upload_initial makes the carry_in that gives it.
int launch_scan(int device, const gp_scan_args &args, const void *in, void *out, const void *carry_in,
                void *carry_out, gp_error *err);

// The call's initial values (args.initial, host memory) uploaded into `carries` on the work stream,
// converted to the scan's accumulator: launch_scan's carry_in for the call's rows.
int upload_initial(const gp_scan_args &args, DeviceBuffer *carries, gp_error *err);

// Bytes of one carry of the scan `args` (0 with err set for a scan the backend does not run).
int64_t scan_carry_size(const gp_scan_args &args, gp_error *err);

}  // namespace gp
