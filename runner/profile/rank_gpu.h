// GPU kernels to ranked entries: kernel time summed over processes and launch shapes,
// names demangled, each kernel mapped to its definition — through the host debug info
// of the program that launched it (nvcc gives the host stub of a kernel the kernel's
// mangled name, and -g gives that stub the kernel's file and line), else by name in
// the sources. A kernel defined nowhere in the repository (cuBLAS, cuDNN, CUTLASS
// instantiations in a library) is external.
#pragma once

#include <vector>

#include "runner/instrument/gpu_activity.h"
#include "runner/profile/origin.h"
#include "runner/profile/profile.h"
#include "runner/profile/source_index.h"

namespace maxcode {

// Entries sorted by kernel time; `share` left at 0 (the caller knows the total).
std::vector<ProfileEntry> rank_gpu(const std::vector<GpuSummary>& processes, const CodeOrigin& origin,
                                   SourceIndex* sources);

}  // namespace maxcode
