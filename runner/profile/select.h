// Target selection: what `maxcode optimize` works on when no function is named
// (neither --function nor targets.functions): the hottest entry of either profile list
// that is the repository's own code inside the configured scope, above a share
// threshold — a CPU function itself, or a GPU kernel through the host function that
// launches it (the unit "launcher + kernel"). targets.prefer says which list goes first.
// Also: a named function with several definitions, resolved from the profile.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/core/config.h"
#include "runner/profile/profile.h"

namespace maxcode {

// A target is worth a search only if it takes at least this share of its list's time.
inline constexpr double kDefaultTargetShare = 0.05;

// In-scope, non-external entries of both lists with share >= min_share, in the order
// they are tried as targets: the `prefer`red list ("gpu" | "cpu") first, or, when
// `prefer` is empty, merged by share (each of its own list's total). At most `top`.
std::vector<ProfileEntry> select_targets(const Profile& profile, int top, double min_share,
                                         const std::string& prefer = "");

// The host function to optimize for a selected entry.
struct TargetChoice {
  std::string function;   // qualified name: a CPU function, or a kernel's launcher
  std::string signature;  // set when the function has several definitions: the hot one
  std::string file;
  int line = 0;
  std::string note;       // for people: what was chosen and why
  // Google Benchmark programs: per benchmark, the entries the function drives
  // (ProfileEntry::benchmark_entries); time_driven_entries() times those alone.
  std::map<std::string, std::vector<std::string>> benchmark_entries;
};

// A CPU function is its own target; a kernel's target is its one launcher in the
// kernel's file. Throws SourceError, saying what to set, when a kernel is launched
// from several host functions, only through a pointer, from another file, or nowhere
// in the sources, and when the function cannot be located in scope.
TargetChoice resolve_target(const std::filesystem::path& repo, const ScopeConfig& scope, const ProfileEntry& entry);

// Profiles the repository's benchmarks and returns the best target that resolves.
// Throws ConfigError, naming the candidates seen and why each was skipped, when there
// is none.
TargetChoice choose_target_by_profile(const std::filesystem::path& repo, const std::filesystem::path& config_file,
                                      const Config& config, bool quiet);

// The signature of the hot definition of `function` when it has several in scope and
// no signature was given: profiles the benchmarks and asks the profile (runner/
// profile/overload.h). Empty, without profiling, when the definitions have at most one
// signature; empty, after a note, when the profile cannot tell (locating the target
// then fails listing the definitions and asking for targets.signature).
std::string signature_from_profile(const std::filesystem::path& repo, const std::filesystem::path& config_file,
                                   const Config& config, const std::string& function, bool quiet);

// A Google Benchmark program without a filter is among the benchmarks: a named target
// is timed on the entries it drives, which a profile finds.
bool wants_benchmark_entries(const Config& config);

// The Google Benchmark entries `function` drives in `profile` (its rows'
// ProfileEntry::benchmark_entries, "f" matching "ns::f"); nullopt when it did not show.
std::optional<std::map<std::string, std::vector<std::string>>> driven_entries(const Profile& profile,
                                                                              const std::string& function);

// The Google Benchmark entries a named function drives (ProfileEntry::benchmark_entries
// of its profile rows), for a config with a Google Benchmark program and no filter:
// profiles the benchmarks. Empty, without profiling, for any other config; empty, after
// a note, when the function did not show in the profile (every entry is then timed).
std::map<std::string, std::vector<std::string>> entries_from_profile(const std::filesystem::path& repo,
                                                                     const std::filesystem::path& config_file,
                                                                     const Config& config, const std::string& function,
                                                                     bool quiet);

}  // namespace maxcode
