#include <algorithm>
#include <memory>

#include "runner/evaluate/evaluator_steps.h"
#include "runner/evaluate/gpu/process_monitor.h"
#include "runner/evaluate/timing/clocks.h"

namespace maxcode {

using namespace evaluator_steps;

double less_process_floor(double wall_s, double floor_s) { return std::max(wall_s - floor_s, 0.05 * wall_s); }

bool PlainClock::run(TimingSession& session, const Side& side, std::size_t b, const EnvVars& env,
                     const std::vector<std::string>& readable, bool watch, Run& out, TimingFailure& failure) {
  const BenchmarkConfig& bench = ctx_.config.benchmarks[b];
  Evaluation scratch;
  {
    const GpuDevice* device = watch ? session.device : nullptr;
    ClockMonitor monitor(device ? device->nvml : std::nullopt);
    // Every process of the run holding a context on the GPU, to be matched with the
    // processes that reported their kernels.
    std::unique_ptr<GpuProcessMonitor> processes;
    if (device) processes = monitor_gpu_processes(device->nvml);
    out.step = steps_.run(scratch, Step("timing " + bench.name, bench.command, side.workspace, bench.timeout_s)
                                       .on(side.files)
                                       .with_env(env)
                                       .watch([&processes](long pid) {
                                         if (processes) processes->started(pid);
                                       })
                                       .showing(readable));
    out.clock = monitor.stop();
    if (processes) out.gpu_processes = processes->stop();
  }
  const StepResult& r = out.step;
  if (!r.tampered.empty()) {
    failure = {r.tampering("timing"), Verdict::kRejected};
    return false;
  }
  if (!r.outcome.ok()) {
    failure = {"benchmark '" + bench.name + "' " + r.outcome.describe() + " during timing",
               failure_verdict(r.outcome, Verdict::kCrashed)};
    return false;
  }
  // Timed runs are checked too: code that behaves differently once it is being timed
  // is caught by its output.
  if (bench.compare_output) {
    Comparison c = compare_outputs(outputs_.reference(b)[0], r.outcome.out, outputs_.tolerance(b));
    if (!c.equal) {
      failure = {"output of '" + bench.name + "' changed during timing: " + c.summary(), Verdict::kIncorrect};
      return false;
    }
  }
  return true;
}

double WallClock::time(TimingSession& session, const Side& side, std::size_t b, TimingFailure& failure) {
  const EnvVars env{{"MAXCODE_SEED", std::to_string(ctx_.config.acceptance.seeds.front())}};
  Run run;
  if (!PlainClock::run(session, side, b, env, {}, false, run, failure)) return -1;
  // The parent's clock around the run (sandbox start-up included, and removed with the
  // process floor): nothing inside the sandbox can reach it.
  const double wall = run.step.outcome.wall_s;
  session.child_s += wall;
  return less_process_floor(wall, process_floor_s_);
}

}  // namespace maxcode
