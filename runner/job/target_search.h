// One target's search (or one candidate's evaluation) as a function: snapshot of a
// checkout, locate the function, baseline and A/A noise, then the search, and the
// result directory (result.json, report.md, report.html, patch.diff, trajectory.jsonl,
// checkpoint.json, rollouts.sqlite). `maxcode optimize`, `maxcode eval` and each
// target of `maxcode run` call it; it prints nothing but progress and returns data.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "runner/core/config.h"
#include "runner/core/environment.h"
#include "runner/report/report.h"
#include "runner/search/checkpoint.h"
#include "runner/search/search.h"
#include "runner/util/error.h"
#include "runner/util/progress.h"

namespace maxcode {

struct TargetSearch {
  std::filesystem::path repo;            // the checkout (read, never written)
  Config config;                         // loaded; search.* overrides already applied
  std::string function;                  // required
  std::string signature;                 // picks an overload
  std::string file;                      // picks among definitions in several files (the profile's)
  std::filesystem::path out;             // the result directory (created)
  std::filesystem::path replay_dir;      // for the replay policy
  std::filesystem::path db;              // rollout store; default <out>/rollouts.sqlite
  std::filesystem::path candidate_file;  // set: evaluate this one candidate (`eval`)
  std::optional<Checkpoint> resume;      // an interrupted search of the same target
  double max_timing_s = 0;               // A/B timing seconds (GPU-seconds); 0: none
  std::function<bool()> stop_requested;  // asked before every step
  bool keep_workspaces = false;
  Environment env;                       // read by the CLI: GPUs, lock and cache folders
};

// The policy has no candidate that could change the target (a replay directory whose
// files all change other functions): nothing was built or timed. A job skips the target.
class NothingToTry : public Error {
 public:
  using Error::Error;
};

struct TargetSearchOutcome {
  RunInfo info;
  SearchResult result;
  std::string patch;  // empty without a winner
};

// Throws (ConfigError, WorkspaceError, std::runtime_error) when the target cannot be
// set up: not found, out of scope, an original that fails its own checks.
TargetSearchOutcome search_target(const TargetSearch& job, Progress& progress);

// "20261122T130501Z-3f9a1c": sortable, unique enough to key the rollout store.
std::string new_run_id();

}  // namespace maxcode
