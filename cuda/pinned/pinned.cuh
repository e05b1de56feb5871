// Internal interface of the pinned host memory module (pinned.cu), beyond the C entries
// gp_cuda_host_alloc, gp_cuda_host_free, gp_cuda_host_is_pinned and gp_cuda_pinned_result_fits.
#pragma once

#include "contract/gp_error.h"

namespace gp {

// Frees every cached pinned block (gp_cuda_empty_cache); the first failed free is reported.
int release_cached_pinned_blocks(gp_error *err);

}  // namespace gp
