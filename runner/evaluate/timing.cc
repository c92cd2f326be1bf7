// Step 3: interleaved A/B timing against the baseline, the A/A noise session and the
// confirmation of a winner. One session at a time per timing worker.
#include "runner/evaluate/evaluator.h"

#include <algorithm>
#include <chrono>

#include "runner/evaluate/evaluator_steps.h"
#include "runner/instrument/google_benchmark.h"
#include "runner/evaluate/gpu/process_monitor.h"
#include "runner/evaluate/gpu/sanitizer.h"
#include "runner/evaluate/output_compare.h"
#include "runner/util/beneath.h"
#include "runner/workspace/patch.h"

namespace maxcode {

namespace fs = std::filesystem;
using namespace evaluator_steps;

Evaluator::Session Evaluator::new_session(int worker) {
  std::lock_guard<std::mutex> lock(mutex_);
  Session s;
  s.rng.seed(rng_());
  if (gpu_) s.device = &devices_.at(static_cast<std::size_t>(worker) % devices_.size());
  return s;
}

int Evaluator::timing_workers() const { return gpu_ ? static_cast<int>(devices_.size()) : 1; }

Evaluator::Side Evaluator::baseline_side() const {
  static const std::map<std::string, std::string> kNone;
  return Side{baseline_workspace_, kNone, shim_baseline_workspace_, shim_baseline_files_};
}

Evaluator::Side Evaluator::side_of(const Checked& c) {
  return Side{c.workspace, c.materialized.files, c.calls_workspace, c.calls_files};
}

double Evaluator::run_suite(Session& session, const Side& side, std::string& failure,
                            Verdict& failure_verdict_out) {
  double total = 0;
  const std::uint64_t seed = config_.acceptance.seeds.front();
  const fs::path& ws = side.workspace;
  const std::map<std::string, std::string>& overrides = side.files;
  session.clock.reset();
  session.runs.assign(config_.benchmarks.size(), std::nullopt);
  session.shim_runs.assign(config_.benchmarks.size(), std::nullopt);
  session.entries.clear();
  session.shim_slot ^= 1;
  for (std::size_t b = 0; b < config_.benchmarks.size(); ++b) {
    const BenchmarkConfig& bench = config_.benchmarks[b];
    if (call_baselines_.size() > b && call_baselines_[b] && call_baselines_[b]->shimmed) {
      // The build that was checked, with this round's perturbation: what is timed here is
      // held against the original's run of the same round (ab_session). The time is the
      // parent's clock around the whole run, out of the candidate's reach.
      Evaluation scratch;
      ShimProblem problem;
      double wall = 0;
      const bool kernels = bench.metric == "kernels";
      auto run = run_shimmed(scratch, side.calls_workspace, side.calls_files, b, session.shim_key, false, problem,
                             true, &wall, session.shim_slot, kernels ? session.device : nullptr);
      if (!run) {
        failure = problem.reason + (problem.tampered ? "" : " during timing");
        failure_verdict_out = problem.tampered ? Verdict::kRejected : Verdict::kCrashed;
        for (const StepRecord& step : scratch.steps)
          failure_verdict_out = failure_verdict(step, failure_verdict_out);
        return -1;
      }
      session.child_s += wall;
      if (kernels) {
        // Kernel time from CUPTI's records of this checked run: the shim's copies, syncs
        // and L2 flush are memcpy and memset activity or host time, none of it counted;
        // its copies are held against the original's shimmed run, which made the same.
        double seconds = 0;
        std::string why;
        try {
          if (!run->kernels) throw std::runtime_error("no GPU activity was read");
          const RunKernels& k = *run->kernels;
          seconds = selections_[b].seconds(k);
          const std::optional<RunKernels>& original = call_baselines_[b]->reference.kernels;
          why = check_gpu_run(b, k, seconds, session.device != nullptr, original ? &*original : nullptr);
          if (why.empty() && session.device) why = check_gpu_processes(run->gpu_processes, k.processes());
          session.kernels = to_json(k, selections_[b]);
          session.runs[b] = k;
          if (session.device) session.kernels["gpu_processes"] = to_json(run->gpu_processes);
        } catch (const std::exception& error) {
          why = error.what();
        }
        if (!why.empty()) {
          failure = "benchmark '" + bench.name + "' during timing: " + why;
          failure_verdict_out = Verdict::kRejected;
          return -1;
        }
        if (run->clock) {
          if (!session.clock) session.clock = run->clock;
          session.clock->sm_mhz = std::max(session.clock->sm_mhz, run->clock->sm_mhz);
          session.clock->throttle_reasons |= run->clock->throttle_reasons;
        }
        total += seconds;
      } else {
        total += std::max(wall - process_floor_s_, 0.05 * wall);
      }
      session.shim_runs[b] = std::move(*run);
      continue;
    }
    const bool kernels = bench.metric == "kernels";
    Evaluation scratch;
    std::vector<std::pair<std::string, std::string>> env{{"MAXCODE_SEED", std::to_string(seed)}};
    GpuRun gpu;
    const bool framework = bench.metric == "google-benchmark";
    fs::path framework_file;
    try {
      if (kernels) {
        gpu = gpu_run(ws, session.device);
        env.insert(env.end(), gpu.env.begin(), gpu.env.end());
      }
      if (framework) {
        framework_file = google_benchmark_file(ws, shim_tag_, ++gpu_run_counter_);
        // Inside the workspace, where an earlier run may have planted a link.
        make_dirs_beneath(ws, framework_file.parent_path());
        auto extra = google_benchmark_env(framework_file, bench.filter);
        env.insert(env.end(), extra.begin(), extra.end());
      }
    } catch (const BeneathError& error) {
      failure = "benchmark '" + bench.name + "': an earlier run replaced maxcode's directory in its workspace: " +
                error.what();
      failure_verdict_out = Verdict::kRejected;
      return -1;
    }
    std::optional<ClockSample> clock;
    StepResult r;
    GpuProcessCount gpu_processes;
    {
      ClockMonitor monitor(kernels && session.device ? session.device->nvml : std::nullopt);
      // Every process of the run holding a context on the GPU, to be matched with the
      // processes that reported their kernels.
      std::unique_ptr<GpuProcessMonitor> processes;
      if (kernels && session.device) processes = monitor_gpu_processes(session.device->nvml);
      r = run_step(scratch, "timing " + bench.name, bench.command, ws, bench.timeout_s, overrides,
                   env, [&processes](long pid) {
                     if (processes) processes->started(pid);
                   }, gpu.readable_paths);
      clock = monitor.stop();
      if (processes) gpu_processes = processes->stop();
    }
    if (!r.tampered.empty()) {
      failure = r.tampering("timing");
      failure_verdict_out = Verdict::kRejected;
      return -1;
    }
    if (!r.outcome.ok()) {
      failure = "benchmark '" + bench.name + "' " + r.outcome.describe() + " during timing";
      failure_verdict_out = failure_verdict(r.outcome, Verdict::kCrashed);
      return -1;
    }
    // Timed runs are checked too: code that behaves differently once it is being
    // timed is caught by its output.
    if (bench.compare_output) {
      Comparison c = compare_outputs(reference_[b][0], r.outcome.out, output_tolerance(b));
      if (!c.equal) {
        failure = "output of '" + bench.name + "' changed during timing: " + c.summary();
        failure_verdict_out = Verdict::kIncorrect;
        return -1;
      }
    }
    if (kernels) {
      double seconds = 0;
      std::string problem;
      try {
        RunKernels run = gpu_records(gpu);
        seconds = selections_[b].seconds(run);
        problem = check_gpu_run(b, run, seconds, session.device != nullptr);
        if (problem.empty()) problem = check_gpu_processes(gpu_processes, run.processes());
        session.kernels = to_json(run, selections_[b]);
        session.runs[b] = run;
        if (session.device) session.kernels["gpu_processes"] = to_json(gpu_processes);
      } catch (const std::exception& error) {
        problem = error.what();
      }
      remove_beneath(ws, gpu.dir);
      if (!problem.empty()) {
        failure = "benchmark '" + bench.name + "' during timing: " + problem;
        failure_verdict_out = Verdict::kRejected;
        return -1;
      }
      if (clock) {
        if (!session.clock) session.clock = clock;
        session.clock->sm_mhz = std::max(session.clock->sm_mhz, clock->sm_mhz);
        session.clock->throttle_reasons |= clock->throttle_reasons;
      }
      total += seconds;
      session.child_s += r.outcome.wall_s;
      continue;
    }
    if (framework) {
      // The framework's own per-iteration times: its wall time hardly moves, since it
      // picks its iteration counts to fill a fixed time.
      try {
        const GoogleBenchmarkRun run = read_google_benchmark(ws, framework_file);
        total += run.seconds();
        for (const GoogleBenchmarkEntry& entry : run.entries) session.entries.push_back({{bench.name, entry.name}, entry.real_s});
      } catch (const BeneathError& error) {
        // Not the file the library wrote: the run replaced it (by a link to a host file,
        // a FIFO), or wrote far more than any benchmark list.
        remove_beneath(ws, framework_file);
        failure = "benchmark '" + bench.name + "' replaced its Google Benchmark output during timing: " + error.what();
        failure_verdict_out = error.kind() == BeneathError::Kind::kIo ? Verdict::kCrashed : Verdict::kRejected;
        return -1;
      } catch (const std::exception& error) {
        remove_beneath(ws, framework_file);
        failure = "benchmark '" + bench.name + "' during timing: " + error.what();
        failure_verdict_out = Verdict::kCrashed;
        return -1;
      }
      remove_beneath(ws, framework_file);
      session.child_s += r.outcome.wall_s;
      continue;
    }
    // The parent's clock around the run (sandbox start-up included, and removed with the
    // process floor below): nothing inside the sandbox can reach it.
    const double wall = r.outcome.wall_s;
    // Less the fixed cost of starting any program: a constant on both sides would
    // compress every ratio towards 1. Never below 5% of what was measured: a run that
    // takes no longer than starting /bin/true keeps a positive time.
    total += std::max(wall - process_floor_s_, 0.05 * wall);
    session.child_s += wall;
  }
  return total;
}

Timing Evaluator::ab_session(Session& session, const std::string& label, const Side& candidate,
                             std::string& failure, Verdict& verdict) {
  const AcceptanceConfig& acc = config_.acceptance;
  Timing t;
  t.noise_floor = noise_floor_;
  t.min_speedup = acc.min_speedup;
  t.process_floor_s = process_floor_s_;
  // One A/B session per GPU at a time, across every maxcode process on this machine.
  std::optional<TimingLock> lock;
  if (session.device) {
    t.device = session.device->label();
    lock.emplace(timing_lock_dir(options_.env.lock_dir), session.device->lock_key());
  }
  const auto start = std::chrono::steady_clock::now();
  std::bernoulli_distribution coin(0.5);
  nlohmann::json candidate_kernels;  // what the candidate's last run launched
  // Google Benchmark entries: per side, each entry's times over the rounds, in order.
  std::vector<std::pair<std::string, std::string>> entry_order;
  std::map<std::pair<std::string, std::string>, std::vector<double>> entry_s[2];
  for (int round = -acc.warmup_rounds;; ++round) {
    // Random order within each round: a drift (thermal, caches, other load) cannot
    // favour whichever side always runs second.
    const bool baseline_first = coin(session.rng);
    // Both sides meet the same perturbation, a new one every round: a result kept from
    // an earlier run or round (in memory or in a file) is stale here.
    session.shim_key = session.rng() | 1;
    std::vector<std::optional<ShimRun>> shim_runs[2];
    double times[2] = {0, 0};
    std::optional<ClockSample> clocks[2];
    for (int k = 0; k < 2; ++k) {
      const bool baseline_side = (k == 0) == baseline_first;
      std::string side_failure;
      Verdict side_verdict = Verdict::kCrashed;
      double s = run_suite(session, baseline_side ? this->baseline_side() : candidate, side_failure, side_verdict);
      if (s < 0) {
        if (baseline_side)
          throw SetupError("the original failed during timing: " + side_failure);
        failure = side_failure;
        verdict = side_verdict;
        return t;
      }
      times[baseline_side ? 0 : 1] = s;
      clocks[baseline_side ? 0 : 1] = session.clock;
      if (round >= 0)
        for (const auto& [entry, seconds] : session.entries) {
          if (std::find(entry_order.begin(), entry_order.end(), entry) == entry_order.end())
            entry_order.push_back(entry);
          entry_s[baseline_side ? 0 : 1][entry].push_back(seconds);
        }
      if (!baseline_side) candidate_kernels = session.kernels;
      (baseline_side ? session.baseline_runs : session.candidate_runs) = session.runs;
      shim_runs[baseline_side ? 0 : 1] = std::move(session.shim_runs);
    }
    // Every timed run through the shim is a checked run: its calls' outputs and what it
    // printed against the original's in this round. The shim's own work (measured in
    // the original's run, never the candidate's) is taken off both sides alike, where it
    // is in the time at all: kernel time holds none of it.
    double shim_s = 0;
    for (std::size_t b = 0; b < shim_runs[0].size(); ++b) {
      if (!shim_runs[0][b] || !shim_runs[1][b]) continue;
      if (config_.benchmarks[b].metric != "kernels") shim_s += shim_overhead_s(shim_runs[0][b]->records);
      // A benchmark that cannot carry a claim (say, an original that does not reproduce
      // its own per-call outputs) is timed, not judged call by call.
      if (!call_baselines_[b]->unverifiable.empty()) continue;
      const std::string differs = compare_shim_runs(b, *shim_runs[0][b], *shim_runs[1][b]);
      if (!differs.empty()) {
        failure = "benchmark '" + config_.benchmarks[b].name + "' during timing (round " +
                  std::to_string(round + acc.warmup_rounds + 1) + ", a new perturbation of the inputs): " + differs;
        verdict = Verdict::kIncorrect;
        return t;
      }
    }
    for (double& side_s : times) side_s = std::max(side_s - shim_s, 0.05 * side_s);
    if (round < 0) continue;  // warm-up
    t.baseline_s.push_back(times[0]);
    t.candidate_s.push_back(times[1]);
    if (session.device) {
      t.baseline_sm_mhz.push_back(clocks[0] ? clocks[0]->sm_mhz : 0);
      t.candidate_sm_mhz.push_back(clocks[1] ? clocks[1]->sm_mhz : 0);
      t.throttled.push_back((clocks[0] && clocks[0]->throttled()) || (clocks[1] && clocks[1]->throttled()));
    }
    const int rounds = round + 1;
    progress_.status(label + ": timing round " + std::to_string(rounds) + "  (" +
                     seconds(times[0]) + " vs " + seconds(times[1]) + ")");
    if (rounds < acc.min_rounds) continue;
    t.speedup = paired_ratio_interval(t.baseline_s, t.candidate_s);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // A narrow interval ends the session only when its rounds agree with each other:
    // under drift or a change of load the interval covers too little (util/stats.h).
    t.drifted = ratios_drifted(t.baseline_s, t.candidate_s);
    if (t.speedup.relative_width() <= acc.target_relative_width && !t.drifted) t.stop_reason = "interval narrow";
    else if (rounds >= acc.max_rounds) t.stop_reason = "max rounds";
    else if (elapsed >= acc.max_timing_s) t.stop_reason = "time cap";
    if (!t.stop_reason.empty()) break;
  }
  session.kernels = candidate_kernels;
  t.session_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  t.baseline_median_s = median(t.baseline_s);
  t.candidate_median_s = median(t.candidate_s);
  for (const auto& entry : entry_order) {
    const auto& a = entry_s[0][entry];
    const auto& b = entry_s[1][entry];
    if (a.empty() || b.empty()) continue;
    t.entries.push_back({entry.first, entry.second, median(a), median(b)});
  }
  t.significant = significant(t.speedup, acc.min_speedup, noise_floor_);
  double floor = 0;
  bool all_known = true;
  for (std::size_t b = 0; b < config_.benchmarks.size(); ++b) {
    floor += floors_[b];
    all_known = all_known && floors_[b] > 0;
  }
  if (all_known) t.roofline_floor_s = floor;
  return t;
}

double Evaluator::measure_process_floor() {
  constexpr int kRuns = 7;
  std::vector<double> times;
  for (int i = 0; i < kRuns; ++i) {
    Evaluation scratch;
    StepResult r = run_step(scratch, "process floor", "/bin/true", baseline_workspace_, 30, {}, {});
    if (!r.outcome.ok()) return 0;  // no floor is the conservative answer
    times.push_back(r.outcome.wall_s);
  }
  return median(times);
}

Timing Evaluator::measure_noise() {
  std::string failure;
  Verdict verdict = Verdict::kCrashed;
  noise_floor_ = 1.0;
  process_floor_s_ = 0;
  Session session = new_session(0);
  if (!gpu_) {
    // Subtracting a floor that is a large part of the run would turn its own noise into
    // ratios: only when it is under 10% of one run of the original's benchmarks.
    const double floor = measure_process_floor();
    std::string why;
    Verdict v = Verdict::kCrashed;
    const double one_run = run_suite(session, baseline_side(), why, v);
    if (one_run > 0 && floor < 0.1 * one_run) process_floor_s_ = floor;
  }
  Timing aa = ab_session(session, "A/A noise", baseline_side(), failure, verdict);
  if (!failure.empty()) throw SetupError("the original failed during the A/A run: " + failure);
  noise_floor_ = maxcode::noise_floor(aa.speedup);
  aa.noise_floor = noise_floor_;
  return aa;
}

void Evaluator::time(Checked& c, int worker) {
  Evaluation& e = c.evaluation;
  if (!c.passed) return;
  const auto start = std::chrono::steady_clock::now();
  std::string failure;
  Verdict verdict = Verdict::kCrashed;
  Session session = new_session(worker);
  Timing t = ab_session(session, e.candidate_id, side_of(c), failure, verdict);
  e.wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  e.child_s += session.child_s;
  if (!session.kernels.is_null()) e.gpu["kernels"] = session.kernels;
  if (!failure.empty()) {
    e.verdict = verdict;
    e.reason = failure;
    c.passed = false;
    return;
  }
  e.timing = t;
  const RatioInterval& s = t.speedup;
  std::string figure = format_numbers("%.3fx (95%% CI %.3f-%.3f", s.median, s.low, s.high) + ", " +
                       std::to_string(s.rounds) + " rounds)";
  if (t.roofline_floor_s > 0)
    figure += format_numbers(", %.0f%% of roofline (original %.0f%%)", 100 * t.roofline_floor_s / t.candidate_median_s,
                     100 * t.roofline_floor_s / t.baseline_median_s);
  if (t.throttled_rounds() > 0)
    figure += ", " + std::to_string(t.throttled_rounds()) + " round(s) with the GPU clock held down";
  const std::string unverifiable = t.significant ? unverifiable_reason() : "";
  if (!unverifiable.empty()) {
    // Timed faster on a benchmark where a result kept between calls would have passed
    // unseen: the figure is not a claim.
    e.verdict = Verdict::kUnverifiable;
    e.reason = figure + "; " + unverifiable;
    c.passed = false;
  } else if (t.significant) {
    e.verdict = Verdict::kFaster;
    e.reason = figure;
    // Would win: prove it memory- and race-clean first (docs/evaluation.md "Each candidate").
    if (gpu_ && !sanitize(e, c.workspace, c.materialized.files, session.device)) c.passed = false;
    // And its work seen from outside its process: a trick that fooled the timer must
    // not become the best so far and crowd out a real improvement.
    if (c.passed && gpu_ && config_.gpu.witness) {
      progress_.status(e.candidate_id + ": out-of-process witness (Nsight Compute)");
      e.witness = witness(c, session, t.speedup.median);
      if (e.witness->status == "rejected") {
        e.verdict = Verdict::kRejected;
        e.reason = e.witness->note;
        c.passed = false;
      }
    }
  } else {
    e.verdict = Verdict::kNotFaster;
    e.reason = figure + ": lower bound below " +
               format_numbers("%.3f", std::max(t.min_speedup, t.noise_floor)) +
               (t.noise_floor > t.min_speedup ? " (A/A noise floor)" : " (minimum speedup)");
  }
}

Timing Evaluator::confirm(Checked& c) {
  std::string failure;
  Verdict verdict = Verdict::kCrashed;
  Session session = new_session(0);
  Timing t = ab_session(session, c.evaluation.candidate_id + " (confirm)", side_of(c), failure, verdict);
  if (!failure.empty()) {
    t.significant = false;
    t.stop_reason = "failed: " + failure;
    return t;
  }
  // The claim rests on CUPTI inside the candidate's process: before it is reported,
  // a witness outside that process's reach must agree with this session's records
  // (ncu's run of the candidate from its timing is reused).
  if (t.significant && gpu_ && config_.gpu.witness) {
    progress_.status(c.evaluation.candidate_id + ": out-of-process witness (Nsight Compute)");
    c.evaluation.witness = witness(c, session, t.speedup.median);
    if (c.evaluation.witness->status == "rejected") {
      t.significant = false;
      t.stop_reason = "rejected: " + c.evaluation.witness->note;
      c.evaluation.verdict = Verdict::kRejected;
      c.evaluation.reason = c.evaluation.witness->note;
    }
  }
  return t;
}

}  // namespace maxcode
