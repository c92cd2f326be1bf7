#include "runner/evaluate/timing/timer.h"

#include <algorithm>
#include <chrono>

#include "runner/evaluate/evaluator_steps.h"
#include "runner/util/cpu_pressure.h"
#include "runner/util/stats.h"

namespace maxcode {

using namespace evaluator_steps;

Timer::Timer(EvaluationContext& context, StepRunner& steps, const OutputCheck& outputs, CallCheck& calls, GpuRuns& gpu)
    : ctx_(context),
      steps_(steps),
      calls_(calls),
      gpu_(gpu),
      wall_(context, steps, outputs, process_floor_s_),
      kernels_(context, steps, outputs, gpu),
      framework_(context, steps, outputs),
      shimmed_(context, calls, gpu, process_floor_s_) {}

TimingSession Timer::new_session(int worker) {
  TimingSession s;
  s.rng.seed(ctx_.random());
  s.worker = worker;
  const auto& devices = gpu_.devices();
  if (ctx_.gpu) s.device = &devices.at(static_cast<std::size_t>(worker) % devices.size());
  return s;
}

int Timer::workers() const { return ctx_.gpu ? static_cast<int>(gpu_.devices().size()) : 1; }

Side Timer::original_side() const {
  static const FileOverrides kNone;
  return Side{ctx_.baseline_workspace, kNone, calls_.original_workspace(), calls_.original_files()};
}

Side Timer::side_of(const Checked& c) {
  return Side{c.workspace, c.materialized.files, c.calls_workspace, c.calls_files};
}

BenchmarkClock& Timer::clock_for(std::size_t b) {
  if (calls_.shimmed(b)) return shimmed_;
  const std::string& metric = ctx_.config.benchmarks[b].metric;
  if (metric == "kernels") return kernels_;
  if (metric == "google-benchmark") return framework_;
  return wall_;
}

double Timer::run_suite(TimingSession& session, const Side& side, TimingFailure& failure) {
  const std::size_t n = ctx_.config.benchmarks.size();
  session.clock.reset();
  session.runs.assign(n, std::nullopt);
  session.shim_runs.assign(n, std::nullopt);
  session.entries.clear();
  session.shim_slot ^= 1;
  double total = 0;
  for (std::size_t b = 0; b < n; ++b) {
    const double seconds = clock_for(b).time(session, side, b, failure);
    if (seconds < 0) return -1;
    total += seconds;
  }
  return total;
}

void Timer::Entries::add(const TimingSession& session, int side) {
  for (const auto& [entry, s] : session.entries) {
    if (std::find(order.begin(), order.end(), entry) == order.end()) order.push_back(entry);
    seconds[side][entry].push_back(s);
  }
}

bool Timer::run_round(TimingSession& session, const Side& candidate, int round, Round& out, Entries& entries,
                      TimingFailure& failure) {
  // Random order within each round: a drift (thermal, caches, other load) cannot favour
  // whichever side always runs second.
  std::bernoulli_distribution coin(0.5);
  const bool original_first = coin(session.rng);
  // Both sides meet the same perturbation, a new one every round: a result kept from an
  // earlier run or round (in memory or in a file) is stale here.
  session.shim_key = session.rng() | 1;
  for (int k = 0; k < 2; ++k) {
    const bool original = (k == 0) == original_first;
    const int side = original ? 0 : 1;
    TimingFailure side_failure;
    const auto waited = cpu_waited_s();
    const auto start = std::chrono::steady_clock::now();
    const double s = run_suite(session, original ? original_side() : candidate, side_failure);
    out.cpu_pressure[side] = cpu_pressure(
        waited, cpu_waited_s(), std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (s < 0) {
      if (original) throw SetupError("the original failed during timing: " + side_failure.reason);
      failure = side_failure;
      return false;
    }
    out.times[side] = s;
    out.clocks[side] = session.clock;
    if (round >= 0) entries.add(session, side);
    if (!original) out.candidate_kernels = session.kernels;
    (original ? session.baseline_runs : session.candidate_runs) = session.runs;
    out.shim_runs[side] = std::move(session.shim_runs);
  }
  const double shim_s = compare_shim_runs(out.shim_runs, round, failure);
  if (shim_s < 0) return false;
  for (double& side_s : out.times) side_s = std::max(side_s - shim_s, 0.05 * side_s);
  return true;
}

double Timer::compare_shim_runs(const std::vector<std::optional<ShimRun>> (&runs)[2], int round,
                                TimingFailure& failure) {
  // The shim's own work (measured in the original's run, never the candidate's) is taken
  // off both sides alike, where it is in the time at all: kernel time holds none of it.
  double shim_s = 0;
  for (std::size_t b = 0; b < runs[0].size(); ++b) {
    if (!runs[0][b] || !runs[1][b]) continue;
    if (ctx_.config.benchmarks[b].metric != "kernels") shim_s += shim_overhead_s(runs[0][b]->records);
    // A benchmark that cannot carry a claim (say, an original that does not reproduce
    // its own per-call outputs) is timed, not judged call by call.
    if (!calls_.baseline(b).unverifiable.empty()) continue;
    const std::string differs = calls_.compare(b, *runs[0][b], *runs[1][b]);
    if (!differs.empty()) {
      failure = {"benchmark '" + ctx_.config.benchmarks[b].name + "' during timing (round " +
                     std::to_string(round + ctx_.config.acceptance.warmup_rounds + 1) +
                     ", a new perturbation of the inputs): " + differs,
                 Verdict::kIncorrect};
      return -1;
    }
  }
  return shim_s;
}

Timing Timer::ab_session(TimingSession& session, const std::string& label, const Side& candidate,
                         TimingFailure& failure) {
  const AcceptanceConfig& acc = ctx_.config.acceptance;
  Timing t;
  t.noise_floor = noise_floor_;
  t.min_speedup = acc.min_speedup;
  t.process_floor_s = process_floor_s_;
  // One A/B session per GPU at a time, across every maxcode process on this machine.
  std::optional<TimingLock> lock;
  if (session.device) {
    t.device = session.device->label();
    ctx_.progress.status(label + ": waiting for the timing lock of " + t.device);
    const auto asked = std::chrono::steady_clock::now();
    lock.emplace(timing_lock_dir(ctx_.options.env.lock_dir), session.device->lock_key());
    t.lock_wait_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
  }
  const auto start = std::chrono::steady_clock::now();
  nlohmann::json candidate_kernels;  // what the candidate's last run launched
  Entries entries;
  for (int round = -acc.warmup_rounds;; ++round) {
    Round r;
    if (!run_round(session, candidate, round, r, entries, failure)) return t;
    candidate_kernels = r.candidate_kernels;
    if (round < 0) continue;  // warm-up
    t.baseline_s.push_back(r.times[0]);
    t.candidate_s.push_back(r.times[1]);
    if (session.device) {
      t.baseline_sm_mhz.push_back(r.clocks[0] ? r.clocks[0]->sm_mhz : 0);
      t.candidate_sm_mhz.push_back(r.clocks[1] ? r.clocks[1]->sm_mhz : 0);
      t.throttled.push_back((r.clocks[0] && r.clocks[0]->throttled()) || (r.clocks[1] && r.clocks[1]->throttled()));
    }
    if (r.cpu_pressure[0] && r.cpu_pressure[1]) {
      t.baseline_cpu_pressure.push_back(*r.cpu_pressure[0]);
      t.candidate_cpu_pressure.push_back(*r.cpu_pressure[1]);
    }
    const int rounds = round + 1;
    ctx_.progress.status(label + ": timing round " + std::to_string(rounds) + "  (" + seconds(r.times[0]) + " vs " +
                         seconds(r.times[1]) + ")");
    if (rounds < acc.min_rounds) continue;
    t.speedup = paired_ratio_interval(t.baseline_s, t.candidate_s);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // A narrow interval ends the session only when its rounds agree with each other:
    // under drift or a change of load the interval covers too little (util/stats.h).
    t.drifted = ratios_drifted(t.baseline_s, t.candidate_s);
    if (t.speedup.relative_width() <= acc.target_relative_width && !t.drifted)
      t.stop_reason = "interval narrow";
    else if (rounds >= acc.max_rounds)
      t.stop_reason = "max rounds";
    else if (elapsed >= acc.max_timing_s)
      t.stop_reason = "time cap";
    if (!t.stop_reason.empty()) break;
  }
  session.kernels = candidate_kernels;
  t.session_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  finish(t, entries);
  return t;
}

void Timer::finish(Timing& t, const Entries& entries) const {
  t.baseline_median_s = median(t.baseline_s);
  t.candidate_median_s = median(t.candidate_s);
  for (const auto& entry : entries.order) {
    const auto a = entries.seconds[0].find(entry);
    const auto b = entries.seconds[1].find(entry);
    if (a == entries.seconds[0].end() || b == entries.seconds[1].end() || a->second.empty() || b->second.empty())
      continue;
    t.entries.push_back({entry.first, entry.second, median(a->second), median(b->second)});
  }
  t.significant = significant(t.speedup, ctx_.config.acceptance.min_speedup, noise_floor_);
  double floor = 0;
  bool all_known = true;
  for (std::size_t b = 0; b < ctx_.config.benchmarks.size(); ++b) {
    floor += gpu_.floor(b);
    all_known = all_known && gpu_.floor(b) > 0;
  }
  if (all_known) t.roofline_floor_s = floor;
}

double Timer::measure_process_floor() {
  constexpr int kRuns = 7;
  double fastest = 0;
  for (int i = 0; i < kRuns; ++i) {
    Evaluation scratch;
    StepResult r = steps_.run(scratch, Step("process floor", "/bin/true", ctx_.baseline_workspace, 30));
    if (!r.outcome.ok()) return 0;  // no floor is the conservative answer
    if (i == 0 || r.outcome.wall_s < fastest) fastest = r.outcome.wall_s;
  }
  // The fastest start, not a typical one: load only adds to a start, and a floor above
  // what the timed runs paid inflates every ratio (subtracted from both sides, it leaves
  // the faster side's remainder smallest). Measured while other work loaded the machine,
  // a median floor made a 4x change read 25x once the load had gone; the fastest keeps
  // the subtraction below the true floor, so a ratio can only stay compressed, never
  // grow past the work it removed.
  return fastest;
}

Timing Timer::measure_noise() {
  noise_floor_ = 1.0;
  process_floor_s_ = 0;
  TimingSession session = new_session(0);
  if (!ctx_.gpu) {
    // Subtracting a floor that is a large part of the run would turn its own noise into
    // ratios: only when it is under 10% of one run of the original's benchmarks.
    const double floor = measure_process_floor();
    TimingFailure ignored;
    const double one_run = run_suite(session, original_side(), ignored);
    if (one_run > 0 && floor < 0.1 * one_run) process_floor_s_ = floor;
  }
  TimingFailure failure;
  Timing aa = ab_session(session, "A/A noise", original_side(), failure);
  if (!failure.reason.empty()) throw SetupError("the original failed during the A/A run: " + failure.reason);
  noise_floor_ = maxcode::noise_floor(aa.speedup);
  aa.noise_floor = noise_floor_;
  return aa;
}

}  // namespace maxcode
