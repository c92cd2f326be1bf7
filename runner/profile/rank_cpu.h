// CPU stacks to ranked entries: self time per function, inclusive time, hot lines,
// where it is defined, and whether it is library code or a possible target.
//
// Self time goes to the function executing when the sample was taken — except that
// library code inlined into the repository's code (std::vector::operator[] in a
// user's loop) counts for the function it was inlined into: the loop is what one
// would rewrite. Out-of-line library calls (memcpy, std::sort) keep their own time.
#pragma once

#include <vector>

#include "runner/profile/call_stacks.h"
#include "runner/profile/origin.h"
#include "runner/profile/profile.h"
#include "runner/profile/source_index.h"

namespace maxcode {

// Entries sorted by self time, highest first; `share` is self over all the stacks'
// weight. Functions without a source file are looked up by name in `sources` when
// given (root: the origin's first root).
std::vector<ProfileEntry> rank_cpu(const CallStacks& stacks, const CodeOrigin& origin,
                                   SourceIndex* sources);

}  // namespace maxcode
