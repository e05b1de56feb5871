// The rows of run.cu's primitive table: for each primitive, its resident launch and the factory of
// its streaming tiler (convert does not stream).  Each primitive's folder defines its row:
//   reduce/     sum, prod, min, max, argmin, argmax, any, all and count_nonzero along the middle
//               axis of (outer, n, inner)
//   scan/       inclusive and exclusive prefix sums along the middle axis
//   correlate/  correlation of an image with a mask (convolution, 1-D and 2-D)
//   copy/       C-contiguous copies of strided views (transpose)
//   convert/    elementwise dtype conversion
// Adding a primitive is its folder and one row here and in run.cu.
#pragma once

#include <memory>

#include "contract/gp_call.h"
#include "contract/gp_error.h"
#include "contract/gp_plan.h"

namespace gp {

class Tiler;  // streaming/engine.cuh

// The call on device memory (call.in and call.out are device addresses of `device`, which is
// current), ordered on the device's work stream and not waited for.
using ResidentLaunch = int (*)(int device, const gp_call &call, gp_error *err);
// The call's streamed form under its plan (host arrays, plan.stream's settings, plan.input_pinned
// and plan.result_pinned), built without touching a device; null with err set when the call cannot
// stream (a device cap too small for one tile).
using TilerFactory = std::unique_ptr<Tiler> (*)(const gp_call &call, const gp_plan &plan, gp_error *err);

int reduce_resident(int device, const gp_call &call, gp_error *err);
std::unique_ptr<Tiler> reduce_tiler(const gp_call &call, const gp_plan &plan, gp_error *err);

int scan_resident(int device, const gp_call &call, gp_error *err);
std::unique_ptr<Tiler> scan_tiler(const gp_call &call, const gp_plan &plan, gp_error *err);

int correlate_resident(int device, const gp_call &call, gp_error *err);
std::unique_ptr<Tiler> correlate_tiler(const gp_call &call, const gp_plan &plan, gp_error *err);

int copy_resident(int device, const gp_call &call, gp_error *err);
std::unique_ptr<Tiler> copy_tiler(const gp_call &call, const gp_plan &plan, gp_error *err);

int convert_resident(int device, const gp_call &call, gp_error *err);

}  // namespace gp
