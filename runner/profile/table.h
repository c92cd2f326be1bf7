// The ranked profile as people read it in a terminal: one row per entry (share, time,
// calls or launches, kind, name, file:line, flags), then how each benchmark ran and
// what bounds it, then warnings.
#pragma once

#include <string>

#include "runner/profile/profile.h"

namespace maxcode {

// At most `top` rows, none below `min_share`.
std::string render_profile_table(const Profile& profile, int top, double min_share);

}  // namespace maxcode
