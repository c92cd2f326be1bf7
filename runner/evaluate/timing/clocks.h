// How one run of one benchmark is timed: one clock per kind of benchmark, each saying
// what it counts. The suite's time is the sum over its benchmarks (timer.h); the A/B
// session compares those sums round by round (util/stats.h states the statistics).
//
// Every clock reads a figure the timed code cannot reach: the parent's clock around the
// sandboxed run, CUPTI's records through a socket the run cannot write, or the
// framework's file read beneath the workspace. And every timed run is a checked run: its
// output (or its calls' outputs) is held against the original's, so that code that
// behaves differently once timed is caught.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "runner/evaluate/call_check.h"
#include "runner/evaluate/gpu_runs.h"
#include "runner/evaluate/output_check.h"
#include "runner/evaluate/step_runner.h"
#include "runner/evaluate/timing/session.h"

namespace maxcode {

class BenchmarkClock {
 public:
  virtual ~BenchmarkClock() = default;
  // One run of benchmark `b` on `side`: the seconds it counts, or a negative number with
  // `failure` set.
  virtual double time(TimingSession& session, const Side& side, std::size_t b, TimingFailure& failure) = 0;
};

// The fixed cost of starting a program in a timed run (sandbox, exec, loader), taken off
// wall times so that it does not compress large ratios; never below 5% of the time
// measured, so that a run no longer than starting /bin/true keeps a positive time.
double less_process_floor(double wall_s, double floor_s);

// The clocks of benchmarks run plainly (not through the call shim): the run, checked
// for tampering and failure and its output compared, is theirs in common.
class PlainClock : public BenchmarkClock {
 protected:
  PlainClock(EvaluationContext& context, StepRunner& steps, const OutputCheck& outputs)
      : ctx_(context), steps_(steps), outputs_(outputs) {}
  struct Run {
    StepResult step;
    std::optional<ClockSample> clock;
    GpuProcessCount gpu_processes;
  };
  // False with `failure` set when the run went behind the harness's back, failed, or
  // printed other output than the original's. `watch`: sample the GPU's clock and its
  // processes on the session's device.
  bool run(TimingSession& session, const Side& side, std::size_t b, const EnvVars& env,
           const std::vector<std::string>& readable, bool watch, Run& out, TimingFailure& failure);

  EvaluationContext& ctx_;
  StepRunner& steps_;
  const OutputCheck& outputs_;
};

// metric "wall": the parent's clock around the sandboxed run, less the process floor.
class WallClock : public PlainClock {
 public:
  WallClock(EvaluationContext& context, StepRunner& steps, const OutputCheck& outputs, const double& process_floor_s)
      : PlainClock(context, steps, outputs), process_floor_s_(process_floor_s) {}
  double time(TimingSession& session, const Side& side, std::size_t b, TimingFailure& failure) override;

 private:
  const double& process_floor_s_;
};

// metric "kernels": the counted kernels' time in CUPTI's records, the run's GPU activity
// checked against the original's (GpuRuns::check) and its GPU processes all accounted for.
class KernelClock : public PlainClock {
 public:
  KernelClock(EvaluationContext& context, StepRunner& steps, const OutputCheck& outputs, GpuRuns& gpu)
      : PlainClock(context, steps, outputs), gpu_(gpu) {}
  double time(TimingSession& session, const Side& side, std::size_t b, TimingFailure& failure) override;

 private:
  GpuRuns& gpu_;
};

// metric "google-benchmark": the framework's own time per iteration, summed over its
// entries; its wall time hardly moves, since it picks its iteration counts to fill a
// fixed time.
class FrameworkClock : public PlainClock {
 public:
  FrameworkClock(EvaluationContext& context, StepRunner& steps, const OutputCheck& outputs)
      : PlainClock(context, steps, outputs) {}
  double time(TimingSession& session, const Side& side, std::size_t b, TimingFailure& failure) override;
};

// A benchmark the call check covers: run on the side's shimmed build with the round's
// perturbation, timed by the parent's clock (wall) or CUPTI's records (kernels); its
// records are held against the other side's at the end of the round (timer.cc).
class ShimmedClock : public BenchmarkClock {
 public:
  ShimmedClock(EvaluationContext& context, CallCheck& calls, GpuRuns& gpu, const double& process_floor_s)
      : ctx_(context), calls_(calls), gpu_(gpu), process_floor_s_(process_floor_s) {}
  double time(TimingSession& session, const Side& side, std::size_t b, TimingFailure& failure) override;

 private:
  double kernel_seconds(TimingSession& session, std::size_t b, const ShimRun& run, TimingFailure& failure);

  EvaluationContext& ctx_;
  CallCheck& calls_;
  GpuRuns& gpu_;
  const double& process_floor_s_;
};

}  // namespace maxcode
