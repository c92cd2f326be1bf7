// The first check: the candidate builds, and its tests pass, judged by their exit code
// and, where a framework reports more (GoogleTest JSON, ctest JUnit), by the reports
// held against the original's (test_results.h). GPU builds also keep ptxas's resource
// report per kernel.
#pragma once

#include <filesystem>

#include "runner/evaluate/checked.h"
#include "runner/evaluate/step_runner.h"
#include "runner/evaluate/test_results.h"

namespace maxcode {

class BuildAndTest : public CandidateCheck {
 public:
  BuildAndTest(EvaluationContext& context, StepRunner& steps) : ctx_(context), steps_(steps) {}

  // The ctest wrapper, once (a warning where ctest cannot write JUnit).
  void prepare_tools();
  // The original, in ctx.baseline_workspace: what its tests report becomes the bar.
  bool check_original(Evaluation& evaluation);
  bool check(Checked& candidate) override;
  // What the test frameworks reported on the original's test run.
  const TestResults& original_tests() const { return original_tests_; }

 private:
  bool build_and_test(Evaluation& e, const std::filesystem::path& workspace, const FileOverrides* overrides);
  bool build(Evaluation& e, const std::filesystem::path& workspace, const FileOverrides* overrides);
  // The configure or build step; its outcome in `outcome` when it succeeds.
  bool build_step(Evaluation& e, const std::string& name, const std::string& command,
                  const std::filesystem::path& workspace, const FileOverrides* overrides, Outcome* outcome);
  void keep_ptxas_report(Evaluation& e, const Outcome& build) const;
  // The folder a workspace's test run writes its reports into, and the environment
  // that makes the frameworks write there.
  std::filesystem::path results_dir(const std::filesystem::path& workspace) const;
  EnvVars test_env(const std::filesystem::path& results) const;
  // Reads what a test run reported (the original's: recorded; a candidate's: judged
  // against it). False with the verdict and reason set when the candidate's run fails.
  bool judge(Evaluation& e, const std::filesystem::path& workspace);

  EvaluationContext& ctx_;
  StepRunner& steps_;
  std::filesystem::path tools_dir_;  // the ctest wrapper's folder; empty: none
  TestResults original_tests_;
};

}  // namespace maxcode
