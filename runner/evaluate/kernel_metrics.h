// Nsight Compute metrics of the top kernels (gpu.ncu): the figures the critiques read,
// and the GPU's peak rates, from which a benchmark's declared roofline becomes a floor
// no honest run can beat (GpuRuns::check).
#pragma once

#include <vector>

#include "runner/evaluate/checked.h"
#include "runner/evaluate/gpu/ncu.h"
#include "runner/evaluate/gpu_runs.h"
#include "runner/evaluate/step_runner.h"

namespace maxcode {

class KernelMetrics {
 public:
  KernelMetrics(EvaluationContext& context, StepRunner& steps, GpuRuns& gpu)
      : ctx_(context), steps_(steps), gpu_(gpu) {}

  // The original's metrics, and the roofline floors they make possible.
  void prepare();
  // The metrics of a candidate's top kernels (`checked` null: the original's); empty
  // when ncu is missing or fails (a warning says why).
  std::vector<NcuKernel> of(const Checked* checked);
  const std::vector<NcuKernel>& original() const { return original_; }

 private:
  // The names of the top kernels by counted time, at most gpu.ncu_kernels of them.
  std::vector<std::string> top_kernels(std::size_t b, const Checked* checked) const;
  std::vector<NcuKernel> warn(const std::string& what);

  EvaluationContext& ctx_;
  StepRunner& steps_;
  GpuRuns& gpu_;
  std::vector<NcuKernel> original_;
};

}  // namespace maxcode
