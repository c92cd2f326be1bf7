// The physics floor without a declaration from the user: the original's measured
// memory traffic (Nsight Compute DRAM bytes per launch of its top kernels) bounds from
// below what any correct version must move, because it has to read its inputs and
// write its outputs at least once per call. The bound used is deliberately loose — a
// hundredth of the original's bytes — since a faster version may legitimately keep
// data in L2 or fuse passes; a candidate far below it (the reported case: 0.0 MB
// moved against the original's 41.5 MB) does not do the work.
#pragma once

#include <string>
#include <vector>

#include "runner/evaluate/gpu/ncu.h"

namespace maxcode {

// Bytes moved per call: the sum over the profiled kernels of mean bytes per launch.
double bytes_per_call(const std::vector<NcuKernel>& kernels);

// Empty when the candidate's traffic is plausible, else the reason with the figures
// ("0.0 MB moved per call; the original moves 41.5 MB"). Silent when either side has
// no measurement or the original moves under 1 MB (too little to bound anything).
std::string check_traffic_floor(const std::vector<NcuKernel>& original, const std::vector<NcuKernel>& candidate);

}  // namespace maxcode
