// The evaluator: build -> test -> output comparison -> timing, for one candidate at a
// time, against a baseline built once. DESIGN.md "Evaluation" is its specification.
//
// Checking (materialize, build, test, compare) is safe to run for several candidates
// at once; timing is not, and the caller serializes it so that nothing else loads the
// machine while a stopwatch runs.
#pragma once

#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "runner/candidate.h"
#include "runner/config.h"
#include "runner/evaluation.h"
#include "runner/knobs.h"
#include "runner/process.h"
#include "runner/progress.h"
#include "runner/source_extent.h"
#include "runner/target.h"
#include "runner/workspace.h"

namespace maxcode {

// The original code itself fails (does not build, fails its tests, prints output that
// changes from run to run): no candidate can be judged.
class SetupError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct EvaluatorOptions {
  std::filesystem::path work_dir;    // workspaces are created here
  std::filesystem::path ccache_dir;  // shared by every build; empty = no ccache
  bool keep_workspaces = false;      // for debugging
};

// A candidate turned into file contents, checked against the scope rule.
struct Materialized {
  Candidate candidate;
  std::map<std::string, std::string> files;  // relative path -> new content
  std::string source_hash;
  std::string rejection;  // non-empty: out of scope or unusable, with the reason
  std::string code;       // what to show of it: definition, diff, or knob settings
};

// A candidate that went through checking; its workspace lives until released.
struct Checked {
  Materialized materialized;
  Evaluation evaluation;
  std::filesystem::path workspace;
  bool passed = false;  // ready for timing
};

class Evaluator {
 public:
  Evaluator(const Config& config, const SourceSnapshot& source, const Target& target,
            const Extent& extent, std::vector<Knob> knobs, EvaluatorOptions options,
            Progress& progress);
  ~Evaluator();

  // Builds, tests and runs the original; keeps its outputs per seed as the reference.
  // Throws SetupError when the original cannot serve as one.
  void prepare_baseline();
  // An A/A session (baseline against itself); sets the noise floor used afterwards.
  Timing measure_noise();
  double noise_floor() const { return noise_floor_; }

  Materialized materialize(const Candidate& candidate) const;
  // Build, test and compare outputs. Thread-safe.
  Checked check(const Materialized& candidate);
  // A/B timing against the baseline; sets the verdict. One at a time.
  void time(Checked& candidate);
  // A fresh A/B session for a winner; the speedup to report.
  Timing confirm(Checked& candidate);
  void release(Checked& candidate) noexcept;

  const std::vector<std::string>& warnings() const { return warnings_; }
  const std::string& baseline_definition() const { return baseline_definition_; }
  Isolation isolation() const;

 private:
  struct StepResult {
    Outcome outcome;
    std::string tampered;  // files changed behind the harness's back, if any
  };
  StepResult run_step(Evaluation& evaluation, const std::string& name, const std::string& command,
                      const std::filesystem::path& workspace, double timeout_s,
                      const std::map<std::string, std::string>& overrides,
                      std::vector<std::pair<std::string, std::string>> extra_env = {},
                      bool time_inside = false);
  bool build_and_test(Evaluation& evaluation, const std::filesystem::path& workspace,
                      const std::map<std::string, std::string>& overrides);
  bool compare_with_reference(Evaluation& evaluation, const std::filesystem::path& workspace,
                              const std::map<std::string, std::string>& overrides);
  // One timed run of every benchmark; returns total seconds, or a failure reason.
  double run_suite(const std::filesystem::path& workspace,
                   const std::map<std::string, std::string>& overrides, std::string& failure,
                   Verdict& failure_verdict);
  Timing ab_session(const std::string& label, const std::filesystem::path& candidate_workspace,
                    const std::map<std::string, std::string>& overrides, std::string& failure,
                    Verdict& failure_verdict);
  std::filesystem::path new_workspace_dir(const std::string& id);
  std::vector<std::pair<std::string, std::string>> base_env(const std::filesystem::path& ws) const;

  const Config& config_;
  const SourceSnapshot& source_;
  Target target_;
  Extent extent_;
  std::vector<Knob> knobs_;
  EvaluatorOptions options_;
  Progress& progress_;
  std::string original_file_;  // target file content
  std::string baseline_definition_;
  std::filesystem::path baseline_workspace_;
  // reference_[benchmark][seed index] = stdout of the original
  std::vector<std::vector<std::string>> reference_;
  double noise_floor_ = 1.0;
  double session_child_s_ = 0;  // child time of the current A/B session
  std::vector<std::string> warnings_;
  std::mutex mutex_;
  std::mt19937_64 rng_;
  int workspace_counter_ = 0;
};

}  // namespace maxcode
