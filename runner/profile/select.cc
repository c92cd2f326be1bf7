#include "runner/profile/select.h"

#include <cstdio>

#include "runner/workspace/locate.h"
#include "runner/profile/profile_run.h"
#include "runner/util/progress.h"

namespace maxcode {

std::vector<ProfileEntry> select_targets(const Profile& profile, int top, double min_share) {
  std::vector<ProfileEntry> out;
  for (const ProfileEntry& e : profile.entries) {
    if (static_cast<int>(out.size()) >= top) break;
    if (e.share < min_share) break;  // entries are sorted by share
    if (e.external || !e.in_scope || e.function.empty()) continue;
    out.push_back(e);
  }
  return out;
}

std::string choose_target_by_profile(const std::filesystem::path& repo, const std::filesystem::path& config_file,
                                     const Config& config, bool quiet) {
  Progress progress(stderr, quiet);
  progress.note("no function named: profiling the benchmarks to choose one");
  ProfileOptions options;
  options.repo = repo;
  options.config = config_file;
  options.quiet = quiet;
  Profile profile;
  try {
    profile = profile_benchmarks(options, config, progress);
  } catch (const std::exception& e) {
    throw ConfigError(config_file.string() + ": targets.functions: no function named, and profiling failed: " +
                      e.what());
  }
  std::string tried;
  for (const ProfileEntry& e : select_targets(profile, 5, kDefaultTargetShare)) {
    try {
      locate_target(repo, config.scope, e.function);
    } catch (const std::exception& error) {
      tried += "\n  " + e.function + ": " + error.what();
      continue;
    }
    char line[256];
    std::snprintf(line, sizeof line, "chose %s (%s:%d), %.1f%% of the profiled time", e.function.c_str(),
                  e.file.c_str(), e.line, e.share * 100);
    progress.note(line);
    return e.function;
  }
  std::string hottest;
  for (std::size_t i = 0; i < profile.entries.size() && i < 3; ++i) {
    const ProfileEntry& e = profile.entries[i];
    char line[256];
    std::snprintf(line, sizeof line, "\n  %.1f%% %s%s", e.share * 100, e.name.c_str(),
                  e.external ? " (external)" : !e.in_scope ? " (out of scope)" : "");
    hottest += line;
  }
  throw ConfigError(config_file.string() + ": targets.functions: no function named, and no function in scope takes " +
                    std::to_string(static_cast<int>(kDefaultTargetShare * 100)) +
                    "% or more of the benchmarks' time; give one with --function" +
                    (tried.empty() ? "" : "\n candidates that could not be located:" + tried) +
                    (hottest.empty() ? "" : "\n hottest entries:" + hottest));
}

}  // namespace maxcode
