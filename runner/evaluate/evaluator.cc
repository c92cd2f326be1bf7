// The evaluator's order of things: the baseline, then each candidate through the
// checks, the timing and, for a would-be winner, the checks a claim needs. The
// strategies are in their own files (evaluator.h lists them).
#include "runner/evaluate/evaluator.h"

#include <chrono>

#include "runner/util/format.h"

namespace maxcode {

Evaluator::Evaluator(const Config& config, const SourceSnapshot& source, const Target& target, const Unit& unit,
                     std::vector<Knob> knobs, EvaluatorOptions options, Progress& progress)
    : ctx_(config, source, target, unit, std::move(options), progress),
      materializer_(ctx_, std::move(knobs)),
      steps_(ctx_),
      gpu_(ctx_),
      build_and_test_(ctx_, steps_),
      outputs_(ctx_, steps_, gpu_),
      calls_(ctx_, steps_, gpu_, outputs_),
      sanitizer_(ctx_, steps_, gpu_),
      metrics_(ctx_, steps_, gpu_),
      witness_(ctx_, steps_, gpu_, calls_),
      timer_(ctx_, steps_, outputs_, calls_, gpu_),
      checks_{&build_and_test_, &outputs_, &calls_} {}

Evaluator::~Evaluator() {
  if (!ctx_.baseline_workspace.empty() && !ctx_.options.keep_workspaces) remove_workspace(ctx_.baseline_workspace);
}

std::vector<std::string> Evaluator::first_seed_outputs() const {
  std::vector<std::string> out;
  for (std::size_t b = 0; b < outputs_.varying().size(); ++b) {
    const auto& per_seed = outputs_.reference(b);
    out.push_back(per_seed.empty() ? "" : per_seed.front());
  }
  return out;
}

void Evaluator::prepare_baseline() {
  ctx_.baseline_workspace = ctx_.new_workspace_dir("baseline");
  steps_.let_write_cache(ctx_.baseline_workspace);
  create_workspace(ctx_.source, ctx_.baseline_workspace);
  Evaluation e;
  e.candidate_id = "baseline";
  build_and_test_.prepare_tools();
  ctx_.progress.status("baseline: building and testing the original");
  if (!build_and_test_.check_original(e)) {
    std::string detail = !e.compiler_output.empty() ? e.compiler_output : e.test_output;
    if (detail.empty() && !e.steps.empty()) detail = e.steps.back().output_tail;
    throw SetupError("the original code does not pass its own checks: " + e.reason +
                     (detail.empty() ? "" : "\n" + detail));
  }
  if (ctx_.gpu) gpu_.prepare_injection(steps_);
  outputs_.record_original(e);
  calls_.prepare();
  if (ctx_.gpu) {
    sanitizer_.prepare();
    metrics_.prepare();
  }
  const Isolation isolation = ctx_.isolation();
  if (isolation == Isolation::kNone && ctx_.config.workspace.isolate)
    ctx_.warn(
        "no sandbox works here (bubblewrap, namespaces, unshare): candidate code runs with the network "
        "reachable and the file system writable");
  if (isolation == Isolation::kUnshare)
    ctx_.warn("only unshare works here: candidate code runs without network, but with the file system writable");
}

Checked Evaluator::check(const Materialized& candidate) {
  const auto start = std::chrono::steady_clock::now();
  Checked c;
  c.materialized = candidate;
  Evaluation& e = c.evaluation;
  e.candidate_id = candidate.candidate.id;
  e.source_hash = candidate.source_hash;
  e.code = candidate.code;
  auto finish = [&] { e.wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  if (!candidate.rejection.empty()) {
    e.verdict = Verdict::kRejected;
    e.reason = candidate.rejection;
    finish();
    return c;
  }
  try {
    c.workspace = ctx_.new_workspace_dir(candidate.candidate.id);
    create_workspace(ctx_.source, c.workspace, candidate.files);
    c.passed = true;
    for (CandidateCheck* step : checks_)
      if (!(c.passed = step->check(c))) break;
  } catch (const std::exception& error) {
    e.verdict = Verdict::kRejected;
    e.reason = std::string("could not evaluate: ") + error.what();
    c.passed = false;
  }
  if (!c.passed) release(c);
  finish();
  return c;
}

std::string Evaluator::figure(const Timing& t) {
  const RatioInterval& s = t.speedup;
  std::string figure = format_numbers("%.3fx (95%% CI %.3f-%.3f", s.median, s.low, s.high) + ", " +
                       std::to_string(s.rounds) + " rounds)";
  if (t.roofline_floor_s > 0)
    figure += format_numbers(", %.0f%% of roofline (original %.0f%%)", 100 * t.roofline_floor_s / t.candidate_median_s,
                             100 * t.roofline_floor_s / t.baseline_median_s);
  if (t.throttled_rounds() > 0)
    figure += ", " + std::to_string(t.throttled_rounds()) + " round(s) with the GPU clock held down";
  if (t.contended_rounds() > 0)
    figure += ", " + std::to_string(t.contended_rounds()) + " round(s) with the CPUs contended";
  return figure;
}

void Evaluator::time(Checked& c, int worker) {
  Evaluation& e = c.evaluation;
  if (!c.passed) return;
  const auto start = std::chrono::steady_clock::now();
  TimingFailure failure;
  TimingSession session = timer_.new_session(worker);
  Timing t = timer_.ab_session(session, e.candidate_id, Timer::side_of(c), failure);
  e.wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  e.child_s += session.child_s;
  if (!session.kernels.is_null()) e.gpu["kernels"] = session.kernels;
  if (!failure.reason.empty()) {
    e.verdict = failure.verdict;
    e.reason = failure.reason;
    c.passed = false;
    return;
  }
  e.timing = t;
  if (t.significant) {
    judge_faster(c, session, t, figure(t));
    return;
  }
  e.verdict = Verdict::kNotFaster;
  e.reason = figure(t) + ": lower bound below " + format_numbers("%.3f", std::max(t.min_speedup, t.noise_floor)) +
             (t.noise_floor > t.min_speedup ? " (A/A noise floor)" : " (minimum speedup)");
}

void Evaluator::judge_faster(Checked& c, const TimingSession& session, const Timing& t, const std::string& figure) {
  Evaluation& e = c.evaluation;
  if (const std::string unverifiable = calls_.unverifiable_reason(); !unverifiable.empty()) {
    // Timed faster on a benchmark where a result kept between calls would have passed
    // unseen: the figure is not a claim.
    e.verdict = Verdict::kUnverifiable;
    e.reason = figure + "; " + unverifiable;
    c.passed = false;
    return;
  }
  e.verdict = Verdict::kFaster;
  e.reason = figure;
  if (!ctx_.gpu) return;
  // Would win: prove it memory- and race-clean first (docs/evaluation.md "Each candidate").
  if (!sanitizer_.check(e, c.workspace, c.materialized.files, session.device)) {
    c.passed = false;
    return;
  }
  // And its work seen from outside its process: a trick that fooled the timer must not
  // become the best so far and crowd out a real improvement.
  if (!ctx_.config.gpu.witness) return;
  ctx_.progress.status(e.candidate_id + ": out-of-process witness (Nsight Compute)");
  e.witness = witness_.check(c, timer_.original_side(), Timer::side_of(c), session, t.speedup.median);
  if (e.witness->status == WitnessStatus::kRejected) {
    e.verdict = Verdict::kRejected;
    e.reason = e.witness->note;
    c.passed = false;
  }
}

Timing Evaluator::confirm(Checked& c) {
  TimingFailure failure;
  TimingSession session = timer_.new_session(0);
  Timing t = timer_.ab_session(session, c.evaluation.candidate_id + " (confirm)", Timer::side_of(c), failure);
  if (!failure.reason.empty()) {
    t.significant = false;
    t.stop_reason = "failed: " + failure.reason;
    return t;
  }
  // The claim rests on CUPTI inside the candidate's process: before it is reported, a
  // witness outside that process's reach must agree with this session's records (ncu's
  // run of the candidate from its timing is reused).
  if (t.significant && ctx_.gpu && ctx_.config.gpu.witness) {
    ctx_.progress.status(c.evaluation.candidate_id + ": out-of-process witness (Nsight Compute)");
    c.evaluation.witness = witness_.check(c, timer_.original_side(), Timer::side_of(c), session, t.speedup.median);
    if (c.evaluation.witness->status == WitnessStatus::kRejected) {
      t.significant = false;
      t.stop_reason = "rejected: " + c.evaluation.witness->note;
      c.evaluation.verdict = Verdict::kRejected;
      c.evaluation.reason = c.evaluation.witness->note;
    }
  }
  return t;
}

void Evaluator::release(Checked& c) noexcept {
  if (!ctx_.options.keep_workspaces) {
    if (!c.workspace.empty()) remove_workspace(c.workspace);
    if (!c.calls_workspace.empty()) remove_workspace(c.calls_workspace);
  }
  if (!c.workspace.empty()) steps_.forget(c.workspace);
  if (!c.calls_workspace.empty()) steps_.forget(c.calls_workspace);
  c.workspace.clear();
  c.calls_workspace.clear();
}

}  // namespace maxcode
