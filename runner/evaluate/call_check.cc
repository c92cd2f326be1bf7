#include "runner/evaluate/call_check.h"

#include <algorithm>

#include "runner/evaluate/call_consistency.h"
#include "runner/evaluate/evaluator_steps.h"
#include "runner/util/beneath.h"
#include "runner/util/files.h"
#include "runner/util/format.h"

namespace maxcode {

namespace fs = std::filesystem;
using namespace evaluator_steps;

namespace {

// A recorded output is at most the runtime's cap per call; a file larger than this was
// not written by it.
constexpr std::size_t kMaxRecordFile = 256u << 20;
// Bytes of outputs recorded per run, over all calls: the per-call cap is this divided by
// the original's number of calls, within [kMinCap, kMaxCap].
constexpr std::uint64_t kRecordBudget = 64u << 20, kMinCap = 4096, kMaxCap = 4u << 20;

// The benchmarks the call check runs: those timed by the wall clock or by their kernels
// (the runtime synchronizes after each call of a GPU launcher, so its outputs are
// complete when read); not a Google Benchmark program, which calls the target millions
// of times, one record line each.
bool checked_by_calls(const BenchmarkConfig& bench) { return bench.metric == "wall" || bench.metric == "kernels"; }

constexpr const char* kNotCheckedByCalls =
    "a Google Benchmark program calls the target for as many iterations as fill its time, too many to "
    "record one by one";

bool same_interface(const ShimPlan& a, const ShimPlan& b) {
  if (a.params.size() != b.params.size() || a.return_element != b.return_element) return false;
  for (std::size_t i = 0; i < a.params.size(); ++i)
    if (a.params[i].name != b.params[i].name || a.params[i].kind != b.params[i].kind ||
        a.params[i].element != b.params[i].element || a.params[i].size != b.params[i].size)
      return false;
  return true;
}

// What to add so that a benchmark can carry a claim.
constexpr const char* kWhatToAdd =
    "describe the element counts of the target's pointer parameters in .maxcode.json "
    "(\"targets\": {\"interface\": {\"param\": \"n\"}}), or give it a benchmark that passes different inputs "
    "on every call";

// Why no claim may rest on a benchmark whose original's reference run is `reference`,
// reproduced as `reproduced` says ("" when it is); "" when one may.
std::string unverifiable_because(const std::string& function, const ShimRun& reference, const std::string& reproduced) {
  bool every_call_compared = true, inputs_changed = false;
  for (const CallRecord& record : reference.records) {
    every_call_compared = every_call_compared && !record.outputs.empty();
    for (const CallArg& arg : record.args) inputs_changed = inputs_changed || arg.input;
  }
  // A benchmark that never calls the target: nothing on it can be cached or skipped.
  if (reference.records.empty()) return "";
  if (!every_call_compared)
    return "no output of '" + function +
           "' could be found and compared per call (its pointer parameters have no known size, and it returns no "
           "number); " +
           kWhatToAdd;
  if (!inputs_changed)
    return "the inputs of '" + function +
           "' could not be sized, so they are not changed between calls, and a result kept from an earlier call "
           "would pass; " +
           kWhatToAdd;
  if (!reproduced.empty())
    return "the original does not reproduce its own per-call outputs on the same inputs (" + reproduced + ")";
  return "";
}

}  // namespace

void CallCheck::prepare() {
  const Config& config = ctx_.config;
  audits_.clear();
  baselines_.assign(config.benchmarks.size(), std::nullopt);
  bool any = false;
  for (const BenchmarkConfig& bench : config.benchmarks) any = any || checked_by_calls(bench);
  Evaluation e;
  e.candidate_id = "baseline-calls";
  workspace_ = ctx_.new_workspace_dir("baseline-calls");
  steps_.let_write_cache(workspace_);
  const std::string problem = build_original(e, any);
  for (std::size_t b = 0; b < config.benchmarks.size(); ++b) {
    const BenchmarkConfig& bench = config.benchmarks[b];
    AuditInputs in;
    in.benchmark = bench.name;
    in.compare_output = bench.compare_output;
    in.references = outputs_.reference(b);
    in.interface = plan_.interface;
    in.rtol = bench.rtol;
    in.atol = bench.atol;
    in.varying = outputs_.varying()[b];
    in.shim_problem = checked_by_calls(bench) ? problem : kNotCheckedByCalls;
    in.outputs_sized = false;
    if (in.shim_problem.empty()) {
      prepare_benchmark(e, b, in);
    } else if (checked_by_calls(bench) && !ctx_.target.function.empty()) {
      CallBaseline baseline;
      baseline.unverifiable = "the call check cannot be made (" + in.shim_problem +
                              "), so a result kept between calls or work skipped on some calls would not be seen; " +
                              kWhatToAdd;
      baselines_[b] = std::move(baseline);
    }
    if (bench.metric == "kernels" && baselines_[b] && !baselines_[b]->unverifiable.empty()) {
      // A GPU benchmark keeps the defences it had before the shim reached GPU launchers
      // (CUPTI's per-launch consistency, the launch audit, the traffic floor, the witness):
      // it is timed plain, not judged unverifiable, and the loss is said.
      ctx_.warn("no per-call check of the outputs on GPU benchmark '" + bench.name +
                "': " + baselines_[b]->unverifiable +
                "; it is judged by its kernels' activity only (per-launch consistency, the witness)");
      baselines_[b] = std::nullopt;
      in.shim_problem = kTimedByKernels;
    }
    if (baselines_[b] && !baselines_[b]->unverifiable.empty())
      ctx_.warn("no speedup can be claimed on benchmark '" + bench.name + "': " + baselines_[b]->unverifiable);
    audits_.push_back(audit_benchmark(in));
    for (const std::string& finding : audits_.back().findings)
      if (finding.find("changes with") == std::string::npos)
        ctx_.warn("benchmark audit of '" + bench.name + "': " + finding);
  }
  bool shimmed = false;
  for (const auto& baseline : baselines_) shimmed = shimmed || (baseline && baseline->shimmed);
  if (!shimmed) {
    if (!ctx_.options.keep_workspaces) remove_workspace(workspace_);
    workspace_.clear();
    files_.clear();
  }
}

std::string CallCheck::build_original(Evaluation& e, bool any) {
  if (ctx_.target.function.empty()) {
    // `maxcode init` checks the original with no target chosen yet: nothing to wrap.
    plan_ = ShimPlan{};
    return "no target function chosen yet";
  }
  plan_ = plan_shim(ctx_.original_file, ctx_.extent, ctx_.config.targets.interface);
  if (!plan_.unsupported.empty() || !any) return plan_.unsupported;
  if (const std::string problem = runs_.prepare_library(); !problem.empty()) return problem;

  ctx_.progress.status("baseline: building the original with the call shim");
  files_[ctx_.target.file] = add_call_shim(ctx_.original_file, ctx_.extent, plan_, {ctx_.tag});
  create_workspace(ctx_.source, workspace_, files_);
  const BuildConfig& build = ctx_.config.build;
  if (!build.configure.empty()) {
    auto r = steps_.run(e, Step("configure (call shim)", build.configure, workspace_, build.timeout_s).on(files_));
    if (!r.outcome.ok()) return "the original does not configure with the call shim: " + r.outcome.describe();
  }
  auto r = steps_.run(e, Step("build (call shim)", build.command, workspace_, build.timeout_s).on(files_));
  if (!r.outcome.ok())
    return "the original does not build with the call shim: " + r.outcome.describe() + "\n" + r.outcome.tail(2000);
  return "";
}

void CallCheck::prepare_benchmark(Evaluation& e, std::size_t b, AuditInputs& in) {
  const BenchmarkConfig& bench = ctx_.config.benchmarks[b];
  ctx_.progress.status("baseline: call check of '" + bench.name + "'");
  CallBaseline baseline;
  ShimProblem why;
  // 1. Observe (no perturbation), finding how far unsized outputs are written.
  ShimRunSpec observe(workspace_, files_, b, 0);
  observe.discover = true;
  auto observed = runs_.run(e, observe, why);
  if (observed) {
    in.observed = observed->records;
    const long calls = static_cast<long>(observed->records.size());
    for (const CallRecord& record : observed->records)
      for (const CallExtent& x : record.extents)
        if (x.bytes > 0)
          baseline.limits.sizes[x.name] = std::max<std::uint64_t>(baseline.limits.sizes[x.name], x.bytes);
    baseline.limits.cap =
        std::clamp<std::uint64_t>(kRecordBudget / static_cast<std::uint64_t>(std::max(1L, calls)), kMinCap, kMaxCap);
    baselines_[b] = baseline;  // run() reads the limits from here
    // 2. The reference perturbation.
    prepare_reference(e, b, baseline, in);
  } else {
    in.shim_problem = why.reason;
    baseline.unverifiable = "the benchmark fails under the call shim: " + why.reason;
  }
  if (bench.metric == "kernels" && baseline.shimmed && baseline.unverifiable.empty()) {
    const std::optional<RunKernels>& k = baseline.reference.kernels;
    if (!k || k->processes() == 0)
      baseline.unverifiable = "no GPU activity was recorded in its run under the call shim";
    else if (!k->messages.empty())
      baseline.unverifiable = "CUPTI reported, under the call shim: " + join(k->messages, "; ");
  }
  baselines_[b] = std::move(baseline);
}

void CallCheck::prepare_reference(Evaluation& e, std::size_t b, CallBaseline& baseline, AuditInputs& in) {
  const ShimRunSpec spec(workspace_, files_, b, ctx_.reference_key);
  ShimProblem why;
  std::optional<ShimRun> reference = run(e, spec, why);
  std::optional<ShimRun> again;
  if (reference) {
    reference = keep_reference(b, std::move(*reference));
    again = run(e, spec, why);
  }
  if (!reference || !again) {
    in.shim_problem = why.reason;
    baseline.unverifiable = "the benchmark fails under the call shim: " + why.reason;
    return;
  }
  in.perturbed_output = reference->out;
  for (const CallRecord& record : reference->records)
    for (const CallOutput& output : record.outputs) in.outputs_sized = in.outputs_sized || output.name != "return";
  baseline.unverifiable = unverifiable_because(ctx_.target.function, *reference, compare(b, *reference, *again));
  baseline.reference = std::move(*reference);
  baseline.shimmed = true;
}

// The reference run's files, copied out of the workspace that later runs overwrite, as
// they are: a link among them is not the run's record.
ShimRun CallCheck::keep_reference(std::size_t b, ShimRun reference) {
  const fs::path keep = ctx_.options.work_dir / ("calls-original-" + std::to_string(b));
  remove_tree(keep);
  fs::create_directories(keep);
  for (const BeneathEntry& entry : list_beneath(workspace_, reference.dir))
    if (entry.kind == BeneathEntry::Kind::kFile)
      write_text_exact(keep / entry.name, read_beneath(workspace_, reference.dir / entry.name, kMaxRecordFile));
  reference.dir = keep;
  reference.root = keep;
  for (CallRecord& record : reference.records)
    for (CallOutput& output : record.outputs) output.file = keep / output.file.filename();
  return reference;
}

bool CallCheck::check(Checked& c) {
  bool any = false;
  for (const auto& baseline : baselines_) any = any || (baseline && baseline->shimmed);
  if (!any) return true;
  Evaluation& e = c.evaluation;
  const std::string& function = ctx_.target.function;
  const std::string& file = c.materialized.files.at(ctx_.target.file);
  std::vector<Extent> found = find_definitions(file, function);
  if (found.size() > 1) {
    std::vector<Extent> same;
    for (const Extent& x : found)
      if (x.signature == ctx_.extent.signature) same.push_back(x);
    found = same;
  }
  if (found.size() != 1) {
    e.verdict = Verdict::kRejected;
    e.reason = "call check: the candidate has " + std::to_string(found.size()) + " definitions of '" + function +
               "' with the original's signature";
    return false;
  }
  const ShimPlan plan = plan_shim(file, found.front(), ctx_.config.targets.interface);
  if (!plan.unsupported.empty() || !same_interface(plan, plan_)) {
    e.verdict = Verdict::kRejected;
    e.reason = "call check: the candidate changes the parameters of '" + function + "'";
    return false;
  }
  c.calls_files = c.materialized.files;
  c.calls_files[ctx_.target.file] = add_call_shim(file, found.front(), plan, {ctx_.tag});
  c.calls_workspace = c.workspace.string() + "-calls";
  create_workspace(ctx_.source, c.calls_workspace, c.calls_files);
  if (!rebuild_candidate(e, c.calls_workspace, c.calls_files)) return false;
  std::map<std::string, OutputError> errors;
  std::vector<std::string> summary;
  for (std::size_t b = 0; b < baselines_.size(); ++b)
    if (shimmed(b) && !check_benchmark(e, b, c.calls_workspace, c.calls_files, errors, summary)) return false;
  for (auto& [name, error] : errors) e.precision.push_back(error);
  e.call_check = join(summary, "; ");
  return true;
}

bool CallCheck::rebuild_candidate(Evaluation& e, const fs::path& ws, const FileOverrides& overrides) {
  auto step = [&](const std::string& name, const std::string& command) {
    auto r = steps_.run(e, Step(name, command, ws, ctx_.config.build.timeout_s).on(overrides));
    if (!r.tampered.empty()) {
      e.verdict = Verdict::kRejected;
      e.reason = "call check: " + r.tampering("its " + name);
      return false;
    }
    if (!r.outcome.ok()) {
      e.verdict = failure_verdict(r.outcome, Verdict::kCompileError);
      e.reason = "call check: the candidate does not " + name + " with the call shim (the original does): " +
                 r.outcome.describe();
      e.compiler_output = r.outcome.tail(kFeedbackBytes);
      return false;
    }
    return true;
  };
  const BuildConfig& build = ctx_.config.build;
  if (!build.configure.empty() && !step("configure", build.configure)) return false;
  return step("build", build.command);
}

bool CallCheck::check_benchmark(Evaluation& e, std::size_t b, const fs::path& ws, const FileOverrides& overrides,
                                std::map<std::string, OutputError>& errors, std::vector<std::string>& summary) {
  const ShimRun& original = baselines_[b]->reference;
  const BenchmarkConfig& bench = ctx_.config.benchmarks[b];
  ShimProblem problem;
  auto got = run(e, ShimRunSpec(ws, overrides, b, ctx_.reference_key), problem);
  if (!got) {
    e.verdict = problem.tampered ? Verdict::kRejected : Verdict::kCrashed;
    // A limit the shimmed run ran into is the cause, as in every other step.
    if (!problem.tampered && !e.steps.empty() && failure_verdict(e.steps.back(), e.verdict) == Verdict::kLimit)
      e.verdict = Verdict::kLimit;
    e.reason = "call check: " + problem.reason;
    return false;
  }
  const std::string times = check_call_times(call_work_seconds(original.records), call_work_seconds(got->records));
  if (!times.empty()) {
    e.verdict = Verdict::kRejected;
    e.reason = "call check of '" + bench.name + "': " + times;
    return false;
  }
  const std::string differs = compare(b, original, *got, &errors);
  if (!differs.empty()) {
    e.verdict = Verdict::kIncorrect;
    e.reason = "call check of '" + bench.name + "' (inputs perturbed and outputs compared on every call): " + differs;
    e.mismatch = e.reason;
    return false;
  }
  if (got->kernels && original.kernels) {
    // Where its work went, against the original's run under the same shim.
    const std::string why =
        gpu_.check(b, *got->kernels, gpu_.selection(b).seconds(*got->kernels), false, &*original.kernels);
    if (!why.empty()) {
      e.verdict = Verdict::kRejected;
      e.reason = "call check of '" + bench.name + "': " + why;
      return false;
    }
  }
  std::size_t compared = 0, probed = 0;
  double gap_s = 0;
  for (const CallRecord& record : original.records) compared += record.outputs.size();
  for (const CallRecord& record : got->records) {
    probed += record.probed;
    if (record.probed) gap_s = std::max(gap_s, record.probe_gap_s);
  }
  summary.push_back("'" + bench.name + "': " + std::to_string(got->records.size()) + " calls, per-call times alike, " +
                    std::to_string(compared) + " recorded outputs equal to the original's on perturbed inputs" +
                    (probed ? ", " + std::to_string(probed) + " of them right after a probe call (at most " +
                                  format_duration(gap_s) + " between the two)"
                            : ""));
  return true;
}

std::optional<ShimRun> CallCheck::run(Evaluation& e, ShimRunSpec spec, ShimProblem& problem, double* wall_s) {
  if (baselines_.size() > spec.benchmark && baselines_[spec.benchmark])
    spec.limits = &baselines_[spec.benchmark]->limits;
  return runs_.run(e, spec, problem, wall_s);
}

std::string CallCheck::prepare_dir(const fs::path& ws, const fs::path& dir, std::size_t b, std::uint64_t key) const {
  return runs_.prepare_dir(ws, dir, key, false, baselines_.at(b) ? &baselines_[b]->limits : nullptr);
}

std::string CallCheck::unverifiable_reason() const {
  std::vector<std::string> reasons;
  for (std::size_t b = 0; b < baselines_.size(); ++b)
    if (baselines_[b] && !baselines_[b]->unverifiable.empty())
      reasons.push_back("unverifiable on benchmark '" + ctx_.config.benchmarks[b].name +
                        "': " + baselines_[b]->unverifiable);
  return join(reasons, "; ");
}

}  // namespace maxcode
