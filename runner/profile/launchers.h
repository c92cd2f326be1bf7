// From a hot kernel to the host code that feeds it: each kernel of a profile gets the
// host functions that launch it by name (runner/profile/launch_sites.h, over every
// source file of the repository), or a note saying why it has none — launched only
// through a pointer, or not launched anywhere in the sources (a library's kernel, or
// launch code maxcode cannot read). The unit to optimize for a kernel is "launcher +
// kernel"; choosing it (one launcher, in the kernel's file) is runner/profile/select.h.
#pragma once

#include <vector>

#include "runner/profile/profile.h"
#include "runner/profile/source_index.h"

namespace maxcode {

// Fills `launchers` and `launch_note` of each kernel that is the repository's own.
void find_launchers(std::vector<ProfileEntry>& kernels, SourceIndex& sources);

}  // namespace maxcode
