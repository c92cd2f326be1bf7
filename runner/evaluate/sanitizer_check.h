// compute-sanitizer on a would-be GPU winner (gpu.sanitizer's tools): memory errors and
// races reject it. A tool the original itself fails cannot judge a candidate, so it is
// left out with a warning instead of rejecting everything.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "runner/evaluate/gpu_runs.h"
#include "runner/evaluate/step_runner.h"

namespace maxcode {

class SanitizerCheck {
 public:
  SanitizerCheck(EvaluationContext& context, StepRunner& steps, const GpuRuns& gpu)
      : ctx_(context), steps_(steps), gpu_(gpu) {}

  // The original through each tool: the tools it passes are the ones candidates meet.
  void prepare();
  // False, with the verdict and reason set, when a tool finds an error or the run fails.
  bool check(Evaluation& e, const std::filesystem::path& workspace, const FileOverrides& overrides,
             const GpuDevice* device);

 private:
  bool run_tool(Evaluation& e, const std::filesystem::path& workspace, const FileOverrides* overrides,
                const GpuDevice* device, const std::string& sanitizer, const std::string& tool);

  EvaluationContext& ctx_;
  StepRunner& steps_;
  const GpuRuns& gpu_;
  std::vector<std::string> tools_;  // the tools the original passes
};

}  // namespace maxcode
