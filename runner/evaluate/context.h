// What every strategy of an evaluation shares (evaluator.h lists them): the inputs of
// the run, the original's workspace, the unguessable names baked into harness files,
// and the few things written from several threads (warnings, the random source,
// workspace and run counters), each behind the one lock here.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "runner/core/config.h"
#include "runner/core/environment.h"
#include "runner/core/target.h"
#include "runner/util/error.h"
#include "runner/util/process.h"
#include "runner/util/progress.h"
#include "runner/workspace/source_extent.h"
#include "runner/workspace/unit.h"
#include "runner/workspace/workspace.h"

namespace maxcode {

// The original code itself fails (does not build, fails its tests, prints output that
// changes from run to run): no candidate can be judged.
class SetupError : public Error {
 public:
  using Error::Error;
};

struct EvaluatorOptions {
  std::filesystem::path work_dir;    // workspaces are created here
  std::filesystem::path ccache_dir;  // shared by every build; empty = no ccache
  bool keep_workspaces = false;      // for debugging
  Environment env;                   // the GPUs it may time on, where the timing locks are
};

class EvaluationContext {
 public:
  // `unit` is the target's unit in its file; `target` may be empty (`maxcode init`
  // checks the original before any function is chosen).
  EvaluationContext(const Config& config, const SourceSnapshot& source, const Target& target, const Unit& unit,
                    EvaluatorOptions options, Progress& progress);

  const Config& config;
  const SourceSnapshot& source;
  const Target target;
  const Unit unit;
  const Extent extent;  // the target's
  const EvaluatorOptions options;
  Progress& progress;
  // The target file as committed, and the unit's definitions in it ("" without a target).
  std::string original_file;
  std::string baseline_definition;
  // Any benchmark timed by its kernels (metric "kernels").
  const bool gpu;
  // Baked into the names of the harness's files in a workspace (call records, test
  // reports, framework output): a candidate cannot look for what it cannot name.
  std::string tag;
  // The perturbation of the call check (never 0: that is none).
  std::uint64_t reference_key = 1;
  // The original's workspace, made by Evaluator::prepare_baseline.
  std::filesystem::path baseline_workspace;

  std::filesystem::path new_workspace_dir(const std::string& id);
  // A number for one run's files, unique in this evaluation.
  long next_run() { return ++run_counter_; }
  std::uint64_t random();
  void warn(const std::string& warning);
  // The same warning said once, however many runs meet its cause.
  void warn_once(const std::string& warning);
  const std::vector<std::string>& warnings() const { return warnings_; }
  Isolation isolation() const;

 private:
  std::mutex mutex_;
  std::mt19937_64 rng_;
  int workspace_counter_ = 0;
  std::atomic<long> run_counter_{0};
  std::vector<std::string> warnings_;
};

}  // namespace maxcode
