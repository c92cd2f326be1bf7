#include "runner/evaluate/evaluator_steps.h"
#include "runner/evaluate/timing/clocks.h"
#include "runner/instrument/google_benchmark.h"
#include "runner/util/beneath.h"

namespace maxcode {

using namespace evaluator_steps;

double FrameworkClock::time(TimingSession& session, const Side& side, std::size_t b, TimingFailure& failure) {
  const BenchmarkConfig& bench = ctx_.config.benchmarks[b];
  const std::filesystem::path& ws = side.workspace;
  EnvVars env{{"MAXCODE_SEED", std::to_string(ctx_.config.acceptance.seeds.front())}};
  const std::filesystem::path file = google_benchmark_file(ws, ctx_.tag, ctx_.next_run());
  try {
    // Inside the workspace, where an earlier run may have planted a link.
    make_dirs_beneath(ws, file.parent_path());
  } catch (const BeneathError& error) {
    failure = {
        "benchmark '" + bench.name + "': an earlier run replaced maxcode's directory in its workspace: " + error.what(),
        Verdict::kRejected};
    return -1;
  }
  auto extra = google_benchmark_env(file, bench.filter);
  env.insert(env.end(), extra.begin(), extra.end());
  Run timed;
  if (!run(session, side, b, env, {}, false, timed, failure)) return -1;
  double total = 0;
  try {
    const GoogleBenchmarkRun run = read_google_benchmark(ws, file);
    total = run.seconds();
    for (const GoogleBenchmarkEntry& entry : run.entries)
      session.entries.push_back({{bench.name, entry.name}, entry.real_s});
  } catch (const BeneathError& error) {
    // Not the file the library wrote: the run replaced it (by a link to a host file, a
    // FIFO), or wrote far more than any benchmark list.
    remove_beneath(ws, file);
    failure = {"benchmark '" + bench.name + "' replaced its Google Benchmark output during timing: " + error.what(),
               error.kind() == BeneathError::Kind::kIo ? Verdict::kCrashed : Verdict::kRejected};
    return -1;
  } catch (const std::exception& error) {
    remove_beneath(ws, file);
    failure = {"benchmark '" + bench.name + "' during timing: " + error.what(), Verdict::kCrashed};
    return -1;
  }
  remove_beneath(ws, file);
  session.child_s += timed.step.outcome.wall_s;
  return total;
}

}  // namespace maxcode
