// `maxcode profile [REPO]`: profile the configured benchmarks (or rank existing
// profile files with --import), print the ranked table, write profile.json.
#pragma once

#include "runner/profile/profile_run.h"

namespace maxcode {

// Exit codes: 0 a profile was written (possibly partial: a benchmark crashed or timed
// out, which the table says); 1 setup error (config, build, unreadable import).
int run_profile(const ProfileOptions& options);

}  // namespace maxcode
