#include "runner/evaluate/gpu/process_monitor.h"
#include "runner/evaluate/timing/clocks.h"
#include "runner/util/beneath.h"

namespace maxcode {

double KernelClock::time(TimingSession& session, const Side& side, std::size_t b, TimingFailure& failure) {
  const BenchmarkConfig& bench = ctx_.config.benchmarks[b];
  EnvVars env{{"MAXCODE_SEED", std::to_string(ctx_.config.acceptance.seeds.front())}};
  GpuRun gpu;
  try {
    gpu = gpu_.start(side.workspace, session.device);
  } catch (const BeneathError& error) {
    failure = {
        "benchmark '" + bench.name + "': an earlier run replaced maxcode's directory in its workspace: " + error.what(),
        Verdict::kRejected};
    return -1;
  }
  env.insert(env.end(), gpu.env.begin(), gpu.env.end());
  Run timed;
  if (!run(session, side, b, env, gpu.readable_paths, true, timed, failure)) return -1;
  double seconds = 0;
  std::string problem;
  try {
    RunKernels k = gpu_.records(gpu);
    seconds = gpu_.selection(b).seconds(k);
    problem = gpu_.check(b, k, seconds, session.device != nullptr);
    if (problem.empty()) problem = check_gpu_processes(timed.gpu_processes, k.processes());
    session.kernels = to_json(k, gpu_.selection(b));
    session.runs[b] = std::move(k);
    if (session.device) session.kernels["gpu_processes"] = to_json(timed.gpu_processes);
  } catch (const std::exception& error) {
    problem = error.what();
  }
  remove_beneath(side.workspace, gpu.dir);
  if (!problem.empty()) {
    failure = {"benchmark '" + bench.name + "' during timing: " + problem, Verdict::kRejected};
    return -1;
  }
  session.add_clock(timed.clock);
  session.child_s += timed.step.outcome.wall_s;
  return seconds;
}

}  // namespace maxcode
