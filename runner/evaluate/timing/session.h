// The state of one A/B timing session (several run at once, one per GPU), the two sides
// it compares, and how a timed run fails.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/core/evaluation.h"
#include "runner/evaluate/call_check.h"
#include "runner/evaluate/gpu/clock_monitor.h"
#include "runner/evaluate/gpu/devices.h"
#include "runner/evaluate/gpu/kernel_time.h"
#include "runner/evaluate/step_runner.h"

namespace maxcode {

// One side of a comparison: its plain build and, where the call shim is used, its
// shimmed build.
struct Side {
  const std::filesystem::path& workspace;
  const FileOverrides& files;
  const std::filesystem::path& calls_workspace;
  const FileOverrides& calls_files;
};

// Why a timed run gave no time: the reason, and the verdict it earns the candidate.
struct TimingFailure {
  std::string reason;
  Verdict verdict = Verdict::kCrashed;
};

struct TimingSession {
  std::mt19937_64 rng;
  const GpuDevice* device = nullptr;
  int worker = 0;  // the timing worker (one per GPU) that runs the session
  double child_s = 0;
  std::optional<ClockSample> clock;  // of the last suite run: the highest SM clock, every throttle reason
  nlohmann::json kernels;            // of the last suite run: what ran, what counted
  // Per benchmark ("kernels" metric only): CUPTI's record of the last suite run, and,
  // after an A/B session, of each side's last run (the witness compares them with ncu).
  std::vector<std::optional<RunKernels>> runs, baseline_runs, candidate_runs;
  // Per benchmark timed through the call shim: the round's perturbation key, and what
  // the last suite run recorded (compared side against side after each round).
  std::uint64_t shim_key = 0;
  int shim_slot = 0;  // the two sides of a round keep their records apart (one workspace in an A/A)
  std::vector<std::optional<ShimRun>> shim_runs;
  // "google-benchmark" benchmarks: each entry's time per iteration in the last suite
  // run, as (benchmark, entry) -> seconds, in the program's order.
  std::vector<std::pair<std::pair<std::string, std::string>, double>> entries;

  // A run's clock sample folded into the suite's.
  void add_clock(const std::optional<ClockSample>& sample) {
    if (!sample) return;
    if (!clock) clock = sample;
    clock->sm_mhz = std::max(clock->sm_mhz, sample->sm_mhz);
    clock->throttle_reasons |= sample->throttle_reasons;
  }
};

}  // namespace maxcode
