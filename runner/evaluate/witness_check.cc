#include "runner/evaluate/witness_check.h"

#include <algorithm>

#include "runner/evaluate/evaluator_steps.h"
#include "runner/evaluate/gpu/cuda_tools.h"
#include "runner/util/beneath.h"

namespace maxcode {

namespace fs = std::filesystem;
using namespace evaluator_steps;

WitnessRecord WitnessCheck::not_witnessed(WitnessRecord record, const std::string& why) {
  record.status = WitnessStatus::kNotWitnessed;
  record.note = why;
  ctx_.warn_once("winners are not witnessed out of process (gpu.witness): " + why);
  return record;
}

namespace {

// ncu's CSV as kernels; nullopt with `problem` set when it cannot be read or ncu could
// not look: no kernel and an error of ncu's own (ERR_NVGPUCTRPERM, an unsupported GPU)
// is not the same as there being nothing to see.
std::optional<std::vector<NcuKernel>> ncu_kernels(const std::string& bench, const std::string& text,
                                                  std::string& problem) {
  try {
    std::vector<NcuKernel> kernels = parse_ncu_csv(text);
    if (const std::size_t at = text.find("==ERROR=="); ncu_work(kernels).launches == 0 && at != std::string::npos) {
      problem = "benchmark '" + bench + "': " + text.substr(at, std::min<std::size_t>(text.find('\n', at) - at, 300));
      return std::nullopt;
    }
    return kernels;
  } catch (const std::exception& error) {
    problem = "benchmark '" + bench + "': " + error.what();
    return std::nullopt;
  }
}

}  // namespace

std::optional<WitnessCheck::NcuRun> WitnessCheck::ncu_run_of(std::size_t b, const Side& side, std::string& problem) {
  const BenchmarkConfig& bench = ctx_.config.benchmarks[b];
  // Timed through the shim: witnessed through it too (its shimmed build, the shim loaded
  // into the benchmark's processes only, not into ncu's own), so that ncu and CUPTI see
  // the same launches in the same state of the caches.
  const bool shimmed = calls_.shimmed(b) && !side.calls_workspace.empty();
  NcuRun run{
      shimmed ? side.calls_workspace : side.workspace, shimmed ? side.calls_files : side.files, bench.command, {}, {}};
  if (shimmed) {
    const fs::path dir = calls_.call_dir(run.workspace) / ("witness-" + std::to_string(b));
    if (const std::string why = calls_.prepare_dir(run.workspace, dir, b, ctx_.reference_key); !why.empty()) {
      problem = "benchmark '" + bench.name + "': " + why;
      return std::nullopt;
    }
    // Added to ncu's own LD_PRELOAD (its injection into the benchmark), never replacing it.
    run.command = "export MAXCODE_SHIM_DIR=" + shell_quote(dir.string()) +
                  " LD_PRELOAD=" + shell_quote(calls_.shim_library()) + "${LD_PRELOAD:+:$LD_PRELOAD}; " + bench.command;
    run.readable.push_back(fs::path(calls_.shim_library()).parent_path().string());
  }
  // An unguessable name: the benchmark runs in this workspace while ncu writes it.
  run.log = run.workspace / ".maxcode-gpu" /
            ("witness-" + std::to_string(ctx_.next_run()) + "-" + std::to_string(ctx_.random()) + ".csv");
  try {
    make_dirs_beneath(run.workspace, run.log.parent_path());
  } catch (const std::exception& error) {
    problem = "benchmark '" + bench.name + "': " + error.what();
    return std::nullopt;
  }
  return run;
}

std::optional<std::vector<NcuKernel>> WitnessCheck::run_ncu_on(std::size_t b, const Side& side, const GpuDevice* device,
                                                               std::string& problem) {
  const BenchmarkConfig& bench = ctx_.config.benchmarks[b];
  const std::optional<NcuRun> run = ncu_run_of(b, side, problem);
  if (!run) return std::nullopt;
  const fs::path& ws = run->workspace;
  auto env = gpu_.device_env(device);
  env.push_back({"MAXCODE_SEED", std::to_string(ctx_.config.acceptance.seeds.front())});
  Evaluation scratch;
  auto r =
      steps_.run(scratch, Step("ncu witness",
                               shell_command(ncu_duration_argv(find_cuda_tool("ncu"), run->log.string(), run->command)),
                               ws, ctx_.config.gpu.ncu_timeout_s)
                              .on(run->overrides)
                              .with_env(env)
                              .showing(run->readable));
  std::string text;
  try {
    if (r.tampered.empty() && r.outcome.ok()) text = read_beneath(ws, run->log, kMaxNcuLogBytes);
  } catch (const std::exception& error) {
    problem = "benchmark '" + bench.name + "': no ncu log (" + error.what() + ")";
  }
  remove_beneath(ws, run->log);
  if (!r.tampered.empty()) {
    problem = r.tampering("ncu");
    return std::nullopt;
  }
  if (!r.outcome.ok()) {
    problem = "benchmark '" + bench.name + "' " + r.outcome.describe() + " under ncu: " + r.outcome.tail(400);
    return std::nullopt;
  }
  if (!problem.empty()) return std::nullopt;
  return ncu_kernels(bench.name, text, problem);
}

std::optional<std::vector<std::vector<NcuKernel>>> WitnessCheck::run_ncu(const Side& side, const GpuDevice* device,
                                                                         std::string& problem) {
  // ncu's durations are held against the session's: measured alone on the GPU too.
  std::optional<TimingLock> alone;
  if (device) alone.emplace(timing_lock_dir(ctx_.options.env.lock_dir), device->lock_key());
  std::vector<std::vector<NcuKernel>> runs(ctx_.config.benchmarks.size());
  for (std::size_t b = 0; b < ctx_.config.benchmarks.size(); ++b) {
    if (ctx_.config.benchmarks[b].metric != "kernels") continue;
    auto kernels = run_ncu_on(b, side, device, problem);
    if (!kernels) return std::nullopt;
    runs[b] = std::move(*kernels);
  }
  return runs;
}

std::optional<std::vector<std::vector<NcuKernel>>> WitnessCheck::original_under_ncu(const Side& original_side,
                                                                                    const GpuDevice* device,
                                                                                    std::string& problem) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!original_tried_) {
    original_tried_ = true;
    ctx_.progress.status("baseline: out-of-process witness (Nsight Compute, every kernel)");
    original_ = run_ncu(original_side, device, original_problem_);
  }
  problem = original_problem_;
  return original_;
}

WitnessRecord WitnessCheck::check(Checked& c, const Side& original_side, const Side& side, const TimingSession& session,
                                  double claimed_speedup) {
  const auto& benchmarks = ctx_.config.benchmarks;
  const double tolerance = ctx_.config.gpu.witness_tolerance;
  WitnessRecord record;
  record.tolerance = tolerance;
  record.claimed_speedup = claimed_speedup;
  if (find_cuda_tool("ncu").empty()) return not_witnessed(record, "Nsight Compute (ncu) not found");

  // CUPTI's side: each version's last run in the A/B session being judged, read with the
  // timer's kernel selection; ncu's: a run of each version under it. Both are summed
  // over the kernel benchmarks, as the timer sums their counted kernel time.
  std::vector<std::size_t> kernel_benchmarks;
  for (std::size_t b = 0; b < benchmarks.size(); ++b) {
    if (benchmarks[b].metric != "kernels") continue;
    if (b >= session.baseline_runs.size() || !session.baseline_runs[b] || b >= session.candidate_runs.size() ||
        !session.candidate_runs[b])
      return not_witnessed(record, "the A/B session kept no CUPTI record of benchmark '" + benchmarks[b].name + "'");
    kernel_benchmarks.push_back(b);
  }
  // Each version's side, from ncu's kernels per benchmark (none: CUPTI's figures only).
  auto sides = [&](const std::vector<std::vector<NcuKernel>>* ncu, const std::vector<std::optional<RunKernels>>& runs) {
    static const std::vector<NcuKernel> none;
    std::vector<WitnessSide> each;
    for (std::size_t b : kernel_benchmarks)
      each.push_back(witness_side(ncu && b < ncu->size() ? (*ncu)[b] : none, *runs[b], gpu_.selection(b)));
    return sum_sides(each);
  };

  // ncu's side: the original once per evaluation, the candidate once (at timing).
  std::string original_problem;
  const auto original_ncu = original_under_ncu(original_side, session.device, original_problem);
  if (!original_ncu) return not_witnessed(record, "the original under ncu: " + original_problem);
  const WitnessSide original = sides(&*original_ncu, session.baseline_runs);
  record.original = original;
  if (std::string why = check_original_witness(original, tolerance); !why.empty()) return not_witnessed(record, why);

  std::string problem;
  if (!c.witness_ncu) c.witness_ncu = run_ncu(side, session.device, problem);
  if (!c.witness_ncu) {
    // The original ran under ncu: a candidate that cannot is not witnessed, and so
    // cannot win.
    record.candidate = sides(nullptr, session.candidate_runs);
    record.status = WitnessStatus::kRejected;
    record.note = "out-of-process witness (Nsight Compute): " + problem;
    return record;
  }
  const WitnessSide candidate = sides(&*c.witness_ncu, session.candidate_runs);
  // A claim that also covers benchmarks timed by wall clock cannot be set against kernel
  // time: only the records are compared then.
  const bool all_kernels = std::all_of(benchmarks.begin(), benchmarks.end(),
                                       [](const BenchmarkConfig& bench) { return bench.metric == "kernels"; });
  return judge_witness(original, candidate, all_kernels ? claimed_speedup : 0, tolerance);
}

}  // namespace maxcode
