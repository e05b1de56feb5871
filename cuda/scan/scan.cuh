// Internal interface of the scan primitive (scan.cu), for its streaming tiler (scan_tiler.cu): the
// scan of device memory that starts every row from a carry and leaves the row's total in another.
#pragma once

#include "contract/gp_call.h"
#include "contract/gp_error.h"
#include "runtime/runtime.cuh"

namespace gp {

// The scan `args` over device memory, ordered on the work stream of `device` (current), where every
// (outer, inner) row starts from carry_in[row] (null: from the operator's identity) and leaves its
// total in carry_out[row] (null: not kept).  Carries are device arrays of outer * inner values of
// the scan's accumulator, scan_carry_size(args) bytes each; they may not overlap.  args.initial
// is not read here: upload_initial makes the carry_in that gives it.  non_finite: null, or a
// NonFiniteFlag's word.
int launch_scan(int device, const gp_scan_args &args, const void *in, void *out, const void *carry_in,
                void *carry_out, unsigned *non_finite, gp_error *err);

// A call's gp_scan_args.non_finite on the device: a zeroed word that launch_scan's kernels set
// when a float sum or product writes an inf or NaN (word() null where the call does not ask),
// then copied into the host's flag once the scan is done.  See fp_errors.c.
class NonFiniteFlag {
  public:
    int start(const gp_scan_args &args, gp_error *err);         // allocates and zeroes the word
    unsigned *word() const { return word_.as<unsigned>(); }
    int report(const gp_scan_args &args, gp_error *err) const;  // copies it out (waits for it)
  private:
    DeviceBuffer word_;
};

// The call's initial values (args.initial, host memory) uploaded into `carries` on the work stream,
// converted to the scan's accumulator: launch_scan's carry_in for the call's rows.
int upload_initial(const gp_scan_args &args, DeviceBuffer *carries, gp_error *err);

// Bytes of one carry of the scan `args` (0 with err set for a scan the backend does not run).
int64_t scan_carry_size(const gp_scan_args &args, gp_error *err);

}  // namespace gp
