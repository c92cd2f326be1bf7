// Target selection: what `maxcode optimize` works on when no function is named
// (neither --function nor targets.functions): the hottest entries of a profile that are
// the repository's own code inside the configured scope, above a share threshold.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "runner/core/config.h"
#include "runner/profile/profile.h"

namespace maxcode {

// A target is worth a search only if it takes at least this share of the time.
inline constexpr double kDefaultTargetShare = 0.05;

// In-scope, non-external entries with share >= min_share, best first, at most `top`.
std::vector<ProfileEntry> select_targets(const Profile& profile, int top, double min_share);

// Profiles the repository's benchmarks and returns the qualified name of the best
// target whose definition can be located in scope. Throws ConfigError, naming the
// candidates seen, when there is none.
std::string choose_target_by_profile(const std::filesystem::path& repo, const std::filesystem::path& config_file,
                                     const Config& config, bool quiet);

}  // namespace maxcode
