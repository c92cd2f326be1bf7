// The second check: every benchmark's printed output, for every seed, against the
// original's (output_compare.h), with the numbers that vary between runs of the
// original (its own timings) left out. A benchmark timed by its kernels also has its
// GPU activity checked here, before any time is spent timing it. Made first: the
// original's outputs as the reference, once it is shown to reproduce them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "runner/evaluate/checked.h"
#include "runner/evaluate/gpu_runs.h"
#include "runner/evaluate/output_compare.h"
#include "runner/evaluate/step_runner.h"

namespace maxcode {

class OutputCheck : public CandidateCheck {
 public:
  OutputCheck(EvaluationContext& context, StepRunner& steps, GpuRuns& gpu) : ctx_(context), steps_(steps), gpu_(gpu) {}

  // Runs the original's benchmarks for every seed and keeps what they print (and, for
  // the first seed, their kernels and framework figures). Throws SetupError when the
  // original fails or does not reproduce its own output.
  void record_original(Evaluation& e);
  bool check(Checked& candidate) override;

  // The original's output of benchmark `b` per seed, and how it is compared.
  const std::vector<std::string>& reference(std::size_t b) const { return reference_.at(b); }
  Tolerance tolerance(std::size_t b) const;
  const std::vector<std::vector<VaryingField>>& varying() const { return varying_; }

 private:
  void record_seed(Evaluation& e, std::size_t b, std::size_t s);
  // The reference is only a reference if the original reproduces it.
  void check_reproduced(Evaluation& e, std::size_t b);
  std::string run_again(Evaluation& e, std::size_t b, const std::string& label);
  // Called with the original's further runs for seed 0 (`again`): fills varying_[b], or
  // throws SetupError when the runs differ in more than numbers at fixed places.
  void mask_varying_fields(std::size_t b, const std::vector<std::string>& again);
  std::string near_miss(const Comparison& c, std::size_t b) const;
  bool check_seed(Checked& c, std::size_t b, std::size_t s, OutputError& printed);
  // The GPU activity of a check run: empty, or why it is rejected.
  std::string check_kernels(Evaluation& e, std::size_t b, std::size_t s, GpuRun& run);

  EvaluationContext& ctx_;
  StepRunner& steps_;
  GpuRuns& gpu_;
  // reference_[benchmark][seed index] = stdout of the original
  std::vector<std::vector<std::string>> reference_;
  // varying_[benchmark]: numbers its output prints that differ between runs of the
  // original with one seed (timings), and those its config names, left out of every
  // comparison of its output.
  std::vector<std::vector<VaryingField>> varying_;
};

}  // namespace maxcode
