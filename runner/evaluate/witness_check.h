// The out-of-process witness of a would-be winner (gpu.witness; gpu/witness.h judges):
// Nsight Compute runs each version once, outside the process whose CUPTI records the
// timer read, and its kernel work and durations must agree with those records and with
// the claimed speedup. The original is run under ncu once per evaluation.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runner/evaluate/call_check.h"
#include "runner/evaluate/checked.h"
#include "runner/evaluate/gpu/witness.h"
#include "runner/evaluate/gpu_runs.h"
#include "runner/evaluate/step_runner.h"
#include "runner/evaluate/timing/session.h"

namespace maxcode {

class WitnessCheck {
 public:
  WitnessCheck(EvaluationContext& context, StepRunner& steps, const GpuRuns& gpu, const CallCheck& calls)
      : ctx_(context), steps_(steps), gpu_(gpu), calls_(calls) {}

  // The witness's record of `candidate`, timed in `session` against `original`:
  // "rejected" when ncu disagrees or cannot run the candidate.
  WitnessRecord check(Checked& candidate, const Side& original, const Side& side, const TimingSession& session,
                      double claimed_speedup);

 private:
  // Every "kernels" benchmark once under ncu: its kernels, per benchmark (empty for the
  // others); nullopt with `problem` set when a run fails or its log cannot be read. A
  // benchmark timed through the call shim is witnessed on the same shimmed build under
  // the shim, so that ncu sees the launches CUPTI timed.
  std::optional<std::vector<std::vector<NcuKernel>>> run_ncu(const Side& side, const GpuDevice* device,
                                                             std::string& problem);
  std::optional<std::vector<NcuKernel>> run_ncu_on(std::size_t b, const Side& side, const GpuDevice* device,
                                                   std::string& problem);
  // Where and how one benchmark runs under ncu: the workspace and files (the shimmed
  // build's, when timed through the shim), the command (with the shim loaded) and the
  // log ncu writes.
  struct NcuRun {
    std::filesystem::path workspace;
    FileOverrides overrides;
    std::string command;
    std::vector<std::string> readable;
    std::filesystem::path log;
  };
  std::optional<NcuRun> ncu_run_of(std::size_t b, const Side& side, std::string& problem);
  // The original's run under ncu, made once whichever worker asks first (a copy: workers
  // read it at once); nullopt with `problem` set when it failed.
  std::optional<std::vector<std::vector<NcuKernel>>> original_under_ncu(const Side& original_side,
                                                                        const GpuDevice* device, std::string& problem);
  WitnessRecord not_witnessed(WitnessRecord record, const std::string& why);

  EvaluationContext& ctx_;
  StepRunner& steps_;
  const GpuRuns& gpu_;
  const CallCheck& calls_;
  // The witness's ncu run of the original, made at the first winner; or why it failed.
  std::optional<std::vector<std::vector<NcuKernel>>> original_;
  std::string original_problem_;
  bool original_tried_ = false;
  std::mutex mutex_;  // the original's run is made once, whichever worker needs it first
};

}  // namespace maxcode
