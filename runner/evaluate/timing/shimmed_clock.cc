#include "runner/evaluate/evaluator_steps.h"
#include "runner/evaluate/gpu/process_monitor.h"
#include "runner/evaluate/timing/clocks.h"

namespace maxcode {

using namespace evaluator_steps;

double ShimmedClock::time(TimingSession& session, const Side& side, std::size_t b, TimingFailure& failure) {
  // The build that was checked, with this round's perturbation: what is timed here is
  // held against the original's run of the same round. The time is the parent's clock
  // around the whole run, out of the candidate's reach.
  const bool kernels = ctx_.config.benchmarks[b].metric == "kernels";
  Evaluation scratch;
  ShimProblem problem;
  double wall = 0;
  ShimRunSpec spec(side.calls_workspace, side.calls_files, b, session.shim_key);
  spec.timed = true;
  // Sessions on several GPUs time the original at once, all in its one workspace: each
  // worker keeps its records in slots of its own.
  spec.slot = 2 * session.worker + session.shim_slot;
  spec.device = kernels ? session.device : nullptr;
  auto run = calls_.run(scratch, spec, problem, &wall);
  if (!run) {
    failure = {problem.reason + (problem.tampered ? "" : " during timing"),
               problem.tampered ? Verdict::kRejected : Verdict::kCrashed};
    for (const StepRecord& step : scratch.steps) failure.verdict = failure_verdict(step, failure.verdict);
    return -1;
  }
  session.child_s += wall;
  double seconds = 0;
  if (kernels) {
    seconds = kernel_seconds(session, b, *run, failure);
    if (seconds < 0) return -1;
    session.add_clock(run->clock);
  } else {
    seconds = less_process_floor(wall, process_floor_s_);
  }
  session.shim_runs[b] = std::move(*run);
  return seconds;
}

// Kernel time from CUPTI's records of this checked run: the shim's copies, syncs and L2
// flush are memcpy and memset activity or host time, none of it counted; its copies are
// held against the original's shimmed run, which made the same.
double ShimmedClock::kernel_seconds(TimingSession& session, std::size_t b, const ShimRun& run, TimingFailure& failure) {
  double seconds = 0;
  std::string why;
  try {
    if (!run.kernels) throw std::runtime_error("no GPU activity was read");
    const RunKernels& k = *run.kernels;
    seconds = gpu_.selection(b).seconds(k);
    const std::optional<RunKernels>& original = calls_.baseline(b).reference.kernels;
    why = gpu_.check(b, k, seconds, session.device != nullptr, original ? &*original : nullptr);
    if (why.empty() && session.device) why = check_gpu_processes(run.gpu_processes, k.processes());
    session.kernels = to_json(k, gpu_.selection(b));
    session.runs[b] = k;
    if (session.device) session.kernels["gpu_processes"] = to_json(run.gpu_processes);
  } catch (const std::exception& error) {
    why = error.what();
  }
  if (!why.empty()) {
    failure = {"benchmark '" + ctx_.config.benchmarks[b].name + "' during timing: " + why, Verdict::kRejected};
    return -1;
  }
  return seconds;
}

}  // namespace maxcode
