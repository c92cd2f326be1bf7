// Interleaved A/B timing against the original (docs/evaluation.md "Timing"): rounds of
// one run of every benchmark on each side in random order, each benchmark timed by its
// clock (clocks.h), until the paired ratio's interval is narrow and its rounds agree,
// or a cap is reached. And the A/A session that sets the noise floor. One session at a
// time per timing worker (one per GPU), under that GPU's exclusive timing lock.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runner/core/evaluation.h"
#include "runner/evaluate/call_check.h"
#include "runner/evaluate/checked.h"
#include "runner/evaluate/gpu_runs.h"
#include "runner/evaluate/output_check.h"
#include "runner/evaluate/timing/clocks.h"
#include "runner/evaluate/timing/session.h"

namespace maxcode {

class Timer {
 public:
  Timer(EvaluationContext& context, StepRunner& steps, const OutputCheck& outputs, CallCheck& calls, GpuRuns& gpu);

  // An A/A session (the original against itself); sets the noise floor used afterwards.
  Timing measure_noise();
  // One A/B session of `candidate` against the original. On a candidate's failure the
  // Timing is partial and `failure` says why; the original's failure throws SetupError.
  Timing ab_session(TimingSession& session, const std::string& label, const Side& candidate, TimingFailure& failure);
  TimingSession new_session(int worker);
  // How many candidates can be timed at once: one per GPU for GPU timing, else one.
  int workers() const;
  Side original_side() const;
  static Side side_of(const Checked& checked);
  double noise_floor() const { return noise_floor_; }

 private:
  // One timed run of every benchmark; total seconds, or negative with `failure` set.
  double run_suite(TimingSession& session, const Side& side, TimingFailure& failure);
  BenchmarkClock& clock_for(std::size_t b);
  // One round: both sides once, in random order, with one perturbation. False with
  // `failure` set when the candidate fails.
  struct Round {
    double times[2] = {0, 0};  // original, candidate
    std::optional<ClockSample> clocks[2];
    std::optional<double> cpu_pressure[2];  // util/cpu_pressure.h
    std::vector<std::optional<ShimRun>> shim_runs[2];
    nlohmann::json candidate_kernels;  // what the candidate's run launched
  };
  // Google Benchmark entries: per side, each entry's times over the rounds, in order.
  struct Entries {
    std::vector<std::pair<std::string, std::string>> order;
    std::map<std::pair<std::string, std::string>, std::vector<double>> seconds[2];
    void add(const TimingSession& session, int side);
  };
  bool run_round(TimingSession& session, const Side& candidate, int round, Round& out, Entries& entries,
                 TimingFailure& failure);
  // Every timed run through the shim is a checked run: its calls' outputs and what it
  // printed against the original's in this round. Returns the shim's own work in the
  // time (measured in the original's run), taken off both sides alike; negative with
  // `failure` set when the runs differ.
  double compare_shim_runs(const std::vector<std::optional<ShimRun>> (&runs)[2], int round, TimingFailure& failure);
  // The fixed cost of starting a program in a timed run, from runs of /bin/true timed the
  // same way.
  double measure_process_floor();
  void finish(Timing& t, const Entries& entries) const;

  EvaluationContext& ctx_;
  StepRunner& steps_;
  CallCheck& calls_;
  GpuRuns& gpu_;
  double noise_floor_ = 1.0;
  double process_floor_s_ = 0;  // per benchmark run; 0 until measure_noise()
  WallClock wall_;
  KernelClock kernels_;
  FrameworkClock framework_;
  ShimmedClock shimmed_;
};

}  // namespace maxcode
