// One run of `maxcode optimize` or `maxcode eval`: config, snapshot, target, baseline,
// noise, then a search or a single evaluation, and the output files.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "runner/core/environment.h"

namespace maxcode {

struct JobOptions {
  std::filesystem::path repo = ".";
  std::filesystem::path config;          // default: <repo>/.maxcode.json
  std::filesystem::path out = "maxcode-out";
  std::string function;                  // default: the config's first target
  std::string signature;                 // picks an overload
  std::string file;                      // with --resume: the file of the target searched before
  std::string policy;                    // overrides search.policy
  std::filesystem::path replay_dir;      // overrides search.replay_dir
  int max_evaluations = 0;               // overrides search.max_evaluations when > 0
  std::filesystem::path candidate_file;  // eval: the candidate
  std::filesystem::path resume;          // optimize: an output directory with a checkpoint
  std::filesystem::path db;              // rollout store; default <out>/rollouts.sqlite
  bool keep_workspaces = false;
  bool quiet = false;
  Environment env;                       // read by the CLI (cli/environment.h)
};

// Exit codes: 0 the run completed (winner or not); 1 setup error (config, target,
// original failing its own checks); the message is printed on stderr.
int run_optimize(const JobOptions& options);
int run_eval(const JobOptions& options);

// `maxcode export`: training data from a rollout store (see rollout_store.h).
int run_export(const std::filesystem::path& db, const std::filesystem::path& out);

}  // namespace maxcode
