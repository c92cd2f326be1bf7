// The ranked profile as people read it in a terminal: the GPU kernels by share of GPU
// time (each with the host function that launches it), then the CPU functions by share
// of CPU time — one row per entry (share, time, calls or launches, name, file:line,
// flags) — then how each benchmark ran and what bounds it, then warnings.
#pragma once

#include <string>

#include "runner/profile/profile.h"

namespace maxcode {

// At most `top` rows per list, none below `min_share` of its list's total.
std::string render_profile_table(const Profile& profile, int top, double min_share);

}  // namespace maxcode
