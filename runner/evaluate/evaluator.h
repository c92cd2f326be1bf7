// The evaluator: one candidate at a time through the checks and the timing, against a
// baseline made once. docs/evaluation.md is its specification. It holds the strategies
// and says in which order they run; each is its own class:
//
//   Materializer           the candidate as files, within the scope rule
//   BuildAndTest           it builds, and its tests pass as the original's do
//   OutputCheck            every benchmark prints what the original prints, per seed
//   CallCheck              per call, on perturbed inputs, through the call shim
//   Timer + its clocks     interleaved A/B rounds, each benchmark by its clock
//   SanitizerCheck         a would-be GPU winner is memory- and race-clean
//   WitnessCheck           ... and Nsight Compute, outside its process, agrees
//
// with StepRunner (every command, sandboxed and sealed), GpuRuns (the CUPTI side of a
// run) and KernelMetrics (ncu's figures for critiques) beneath them, and the
// EvaluationContext they share.
//
// Checking (materialize, build, test, compare) is safe to run for several candidates
// at once; timing is not, and the caller serializes it so that nothing else loads the
// machine while a stopwatch runs.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "runner/core/evaluation.h"
#include "runner/evaluate/audit.h"
#include "runner/evaluate/build_and_test.h"
#include "runner/evaluate/call_check.h"
#include "runner/evaluate/checked.h"
#include "runner/evaluate/context.h"
#include "runner/evaluate/gpu_runs.h"
#include "runner/evaluate/kernel_metrics.h"
#include "runner/evaluate/materialize.h"
#include "runner/evaluate/output_check.h"
#include "runner/evaluate/sanitizer_check.h"
#include "runner/evaluate/step_runner.h"
#include "runner/evaluate/timing/timer.h"
#include "runner/evaluate/witness_check.h"
#include "runner/workspace/knobs.h"

namespace maxcode {

class Evaluator {
 public:
  // `unit` is the target's unit in its file (unit.h); its first function is the target.
  // `target` may be empty (no function chosen yet, as `maxcode init` checks the
  // original): then only prepare_baseline() and measure_noise() apply.
  Evaluator(const Config& config, const SourceSnapshot& source, const Target& target, const Unit& unit,
            std::vector<Knob> knobs, EvaluatorOptions options, Progress& progress);
  ~Evaluator();

  // Builds, tests and runs the original; keeps its outputs per seed as the reference.
  // Throws SetupError when the original cannot serve as one.
  void prepare_baseline();
  // An A/A session (baseline against itself); sets the noise floor used afterwards.
  Timing measure_noise() { return timer_.measure_noise(); }
  double noise_floor() const { return timer_.noise_floor(); }

  Materialized materialize(const Candidate& candidate) const { return materializer_.materialize(candidate); }
  // Build, test and compare outputs. Thread-safe.
  Checked check(const Materialized& candidate);
  // How many candidates can be timed at once: one per GPU for GPU timing, else one.
  int timing_workers() const { return timer_.workers(); }
  // A/B timing against the baseline; sets the verdict. One at a time per worker; for
  // GPU timing, a would-be winner also goes through compute-sanitizer and the
  // out-of-process witness here (a rejection makes the verdict kRejected).
  void time(Checked& candidate, int worker = 0);
  // A fresh A/B session for a winner; the speedup to report. For GPU timing with
  // gpu.witness, a significant one then goes before the out-of-process witness
  // (gpu/witness.h): its record lands in the candidate's evaluation, and a disagreement
  // makes the verdict kRejected, the Timing not significant and its stop_reason
  // "rejected: <reason>".
  Timing confirm(Checked& candidate);
  // Nsight Compute metrics of the top kernels (GPU timing with gpu.ncu only); empty
  // when ncu is missing or fails (a warning says why). `checked` null: the original.
  std::vector<NcuKernel> ncu_metrics(const Checked* checked) { return metrics_.of(checked); }
  const std::vector<NcuKernel>& baseline_ncu() const { return metrics_.original(); }
  void release(Checked& candidate) noexcept;

  const std::vector<std::string>& warnings() const { return ctx_.warnings(); }
  // The benchmark audit (one per benchmark), made by prepare_baseline.
  const std::vector<BenchmarkAudit>& audits() const { return calls_.audits(); }
  // The original's output per benchmark for the first seed ("" where not compared), and
  // the numbers in it that vary between runs (timings): made by prepare_baseline.
  std::vector<std::string> first_seed_outputs() const;
  const std::vector<std::vector<VaryingField>>& varying_fields() const { return outputs_.varying(); }
  // The original unit's definitions, in file order (the target's alone for a unit of one).
  const std::string& baseline_definition() const { return ctx_.baseline_definition; }
  // What the test frameworks reported on the original's test run (test_results.h),
  // made by prepare_baseline; candidates' runs are held against it.
  const TestResults& original_tests() const { return build_and_test_.original_tests(); }
  Isolation isolation() const { return ctx_.isolation(); }

 private:
  // The figure of a timed candidate's speedup, as its reason says it.
  static std::string figure(const Timing& t);
  // A significant candidate's checks before it may win: unverifiable benchmarks, then
  // (GPU) compute-sanitizer and the witness.
  void judge_faster(Checked& c, const TimingSession& session, const Timing& t, const std::string& figure);

  EvaluationContext ctx_;
  Materializer materializer_;
  StepRunner steps_;
  GpuRuns gpu_;
  BuildAndTest build_and_test_;
  OutputCheck outputs_;
  CallCheck calls_;
  SanitizerCheck sanitizer_;
  KernelMetrics metrics_;
  WitnessCheck witness_;
  Timer timer_;
  // The checks before timing, in order.
  std::vector<CandidateCheck*> checks_;
};

}  // namespace maxcode
