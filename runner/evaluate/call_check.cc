// The call check: a dedicated run of each benchmark with the call shim around the
// target (runner/workspace/call_shim.h), first for the original at setup (which also
// feeds the benchmark audit), then for every candidate that passed the ordinary checks.
// A candidate is rejected when its per-call times show a cache or skipped calls that
// the original's do not (call_consistency.h), or when, with inputs perturbed and
// outputs poisoned between calls, any recorded output element differs from the
// original's on the same inputs. Its precision against the original is kept either way.
#include <fstream>

#include "runner/evaluate/call_consistency.h"
#include "runner/evaluate/evaluator.h"
#include "runner/evaluate/evaluator_steps.h"
#include "runner/evaluate/precision.h"
#include "runner/util/files.h"

namespace maxcode {

namespace fs = std::filesystem;
using namespace evaluator_steps;

namespace {

std::string read_binary(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The benchmarks the call check runs: those timed by the wall clock (a GPU benchmark's
// host launcher returns before its kernels finish; gpu_checks.cc covers those; a Google
// Benchmark program calls the target millions of times, one record line each).
bool checked_by_calls(const BenchmarkConfig& bench) { return bench.metric == "wall"; }

// Why the call check leaves out a benchmark that checked_by_calls() refuses.
std::string not_checked_by_calls(const BenchmarkConfig& bench) {
  if (bench.metric == "kernels") return kTimedByKernels;
  return "a Google Benchmark program calls the target for as many iterations as fill its time, too many to "
         "record one by one";
}

bool same_interface(const ShimPlan& a, const ShimPlan& b) {
  if (a.params.size() != b.params.size()) return false;
  for (std::size_t i = 0; i < a.params.size(); ++i)
    if (a.params[i].name != b.params[i].name || a.params[i].kind != b.params[i].kind ||
        a.params[i].element != b.params[i].element)
      return false;
  return true;
}

}  // namespace

fs::path Evaluator::call_dir(const fs::path& workspace) const {
  return workspace / (".maxcode-calls-" + shim_tag_);
}

std::optional<std::vector<CallRecord>> Evaluator::run_with_shim(Evaluation& e, const fs::path& ws,
                                                                const std::map<std::string, std::string>& overrides,
                                                                std::size_t b, bool perturb, std::string& out,
                                                                std::string& problem) {
  const BenchmarkConfig& bench = config_.benchmarks[b];
  const fs::path dir = call_dir(ws);
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  fs::create_directories(dir);
  write_text(dir / "mode", perturb ? "perturb\n" : "observe\n");
  auto r = run_step(e, std::string("call check ") + bench.name + (perturb ? " (perturbed)" : " (observed)"),
                    bench.command, ws, bench.timeout_s, overrides,
                    {{"MAXCODE_SEED", std::to_string(config_.acceptance.seeds.front())}});
  if (!r.tampered.empty()) {
    problem = "source files changed during the call check: " + r.tampered;
    return std::nullopt;
  }
  if (!r.outcome.ok()) {
    problem = "benchmark '" + bench.name + "' " + r.outcome.describe() + " under the call shim" +
              (perturb ? " with perturbed inputs" : "");
    return std::nullopt;
  }
  out = r.outcome.out;
  try {
    return read_call_records(dir);
  } catch (const std::exception& error) {
    problem = error.what();
    return std::nullopt;
  }
}

void Evaluator::prepare_call_check() {
  audits_.clear();
  call_baselines_.assign(config_.benchmarks.size(), std::nullopt);
  std::string problem;
  if (target_.function.empty()) {
    // `maxcode init` checks the original with no target chosen yet: nothing to wrap.
    shim_plan_ = ShimPlan{};
    problem = "no target function chosen yet";
  } else {
    shim_plan_ = plan_shim(original_file_, extent_, config_.targets.interface);
    problem = shim_plan_.unsupported;
  }
  fs::path ws;
  Evaluation e;
  e.candidate_id = "baseline-calls";
  std::map<std::string, std::string> overrides;
  bool any = false;
  for (const BenchmarkConfig& bench : config_.benchmarks) any = any || checked_by_calls(bench);
  if (problem.empty() && any) {
    progress_.status("baseline: building the original with the call shim");
    ws = new_workspace_dir("baseline-calls");
    ShimOptions options{call_dir(ws).string(), shim_tag_, shim_salt_};
    overrides[target_.file] = add_call_shim(original_file_, extent_, shim_plan_, options);
    create_workspace(source_, ws, overrides);
    if (!config_.build.configure.empty()) {
      auto r = run_step(e, "configure (call shim)", config_.build.configure, ws, config_.build.timeout_s, overrides);
      if (!r.outcome.ok()) problem = "the original does not configure with the call shim: " + r.outcome.describe();
    }
    if (problem.empty()) {
      auto r = run_step(e, "build (call shim)", config_.build.command, ws, config_.build.timeout_s, overrides);
      if (!r.outcome.ok())
        problem = "the original does not build with the call shim: " + r.outcome.describe() + "\n" +
                  r.outcome.tail(2000);
    }
  }
  for (std::size_t b = 0; b < config_.benchmarks.size(); ++b) {
    const BenchmarkConfig& bench = config_.benchmarks[b];
    AuditInputs in;
    in.benchmark = bench.name;
    in.compare_output = bench.compare_output;
    in.references = reference_[b];
    in.interface = shim_plan_.interface;
    in.rtol = bench.rtol;
    in.atol = bench.atol;
    in.shim_problem = problem;
    in.outputs_sized = false;
    for (const ShimParam& param : shim_plan_.params)
      in.outputs_sized = in.outputs_sized || (param.kind == ShimParam::Kind::kOutput && !param.size.empty());
    // A benchmark the shim never runs says why, also when there is no target yet (init).
    if ((problem.empty() || target_.function.empty()) && !checked_by_calls(bench))
      in.shim_problem = not_checked_by_calls(bench);
    if (in.shim_problem.empty()) {
      progress_.status("baseline: call check of '" + bench.name + "'");
      std::string out, why;
      in.observed = run_with_shim(e, ws, overrides, b, false, out, why);
      if (!in.observed) {
        in.shim_problem = why;
      } else {
        CallBaseline baseline;
        baseline.records = *in.observed;
        if (shim_plan_.interface != "none") {
          auto perturbed = run_with_shim(e, ws, overrides, b, true, out, why);
          if (perturbed) {
            in.perturbed_output = out;
            baseline.perturb = true;
            baseline.records = *perturbed;
            baseline.dir = options_.work_dir / ("calls-original-" + std::to_string(b));
            std::error_code ignored;
            fs::remove_all(baseline.dir, ignored);
            fs::create_directories(baseline.dir);
            for (const auto& entry : fs::directory_iterator(call_dir(ws)))
              fs::copy_file(entry.path(), baseline.dir / entry.path().filename());
            for (CallRecord& record : baseline.records)
              for (CallOutput& output : record.outputs) output.file = baseline.dir / output.file.filename();
          } else {
            warnings_.push_back("call check of '" + bench.name + "': inputs are not perturbed, because " + why);
          }
        }
        if (!baseline.records.empty()) call_baselines_[b] = std::move(baseline);
      }
    }
    audits_.push_back(audit_benchmark(in));
    for (const std::string& finding : audits_.back().findings)
      if (finding.find("changes with") == std::string::npos)
        warnings_.push_back("benchmark audit of '" + bench.name + "': " + finding);
  }
  if (!ws.empty() && !options_.keep_workspaces) remove_workspace(ws);
}

bool Evaluator::call_check(Evaluation& e, const fs::path& ws, const std::map<std::string, std::string>& files) {
  bool any = false;
  for (const auto& baseline : call_baselines_) any = any || baseline.has_value();
  if (!any) return true;
  const std::string& file = files.at(target_.file);
  std::vector<Extent> found = find_definitions(file, target_.function);
  if (found.size() > 1) {
    std::vector<Extent> same;
    for (const Extent& x : found)
      if (x.signature == extent_.signature) same.push_back(x);
    found = same;
  }
  if (found.size() != 1) {
    e.call_check = "not run: the candidate has " + std::to_string(found.size()) + " definitions of '" +
                   target_.function + "' with the original's signature";
    return true;
  }
  const ShimPlan plan = plan_shim(file, found.front(), config_.targets.interface);
  if (!plan.unsupported.empty() || !same_interface(plan, shim_plan_)) {
    e.verdict = Verdict::kRejected;
    e.reason = "call check: the candidate changes the parameters of '" + target_.function + "'";
    return false;
  }
  std::map<std::string, std::string> overrides = files;
  overrides[target_.file] = add_call_shim(file, found.front(), plan, {call_dir(ws).string(), shim_tag_, shim_salt_});
  write_text(ws / target_.file, overrides[target_.file]);
  auto restore = [&]() {
    write_text(ws / target_.file, file);
    auto r = run_step(e, "build (after the call check)", config_.build.command, ws, config_.build.timeout_s, files);
    if (r.outcome.ok() && r.tampered.empty()) return true;
    e.verdict = Verdict::kRejected;
    e.reason = "could not rebuild the candidate after the call check: " + r.outcome.describe();
    return false;
  };
  auto build = run_step(e, "build (call shim)", config_.build.command, ws, config_.build.timeout_s, overrides);
  if (!build.outcome.ok() || !build.tampered.empty()) {
    if (!build.tampered.empty()) {
      restore();
      e.verdict = Verdict::kRejected;
      e.reason = "source files changed during the call check's build: " + build.tampered;
      return false;
    }
    e.call_check = "not run: the candidate does not build with the call shim (" + build.outcome.describe() + ")";
    std::lock_guard<std::mutex> lock(mutex_);
    warnings_.push_back("call check of " + e.candidate_id + ": " + e.call_check);
    return restore();
  }
  std::map<std::string, OutputError> errors;
  std::vector<std::string> summary;
  for (std::size_t b = 0; b < call_baselines_.size(); ++b) {
    if (!call_baselines_[b]) continue;
    const CallBaseline& original = *call_baselines_[b];
    const BenchmarkConfig& bench = config_.benchmarks[b];
    std::string out, problem;
    auto records = run_with_shim(e, ws, overrides, b, original.perturb, out, problem);
    if (!records) {
      restore();
      e.verdict = Verdict::kCrashed;
      e.reason = "call check: " + problem;
      return false;
    }
    const std::string times = check_call_times(call_seconds(original.records), call_seconds(*records));
    if (!times.empty()) {
      restore();
      e.verdict = Verdict::kRejected;
      e.reason = "call check of '" + bench.name + "': " + times;
      return false;
    }
    std::size_t compared = 0;
    for (const CallRecord& want : original.records) {
      for (const CallOutput& output : want.outputs) {
        const CallOutput* got = nullptr;
        if (want.call < static_cast<long>(records->size()))
          for (const CallOutput& o : (*records)[want.call].outputs)
            if (o.name == output.name) got = &o;
        OutputError error;
        if (got) {
          error = compare_buffers(output.name, output.type, read_binary(output.file), read_binary(got->file),
                                  bench.rtol, bench.atol);
        } else {  // the candidate's run made fewer calls, or wrote no output for this one
          error.output = output.name;
          error.type = output.type;
          error.mismatches = 1;
          error.first_mismatch = "no output recorded";
        }
        ++compared;
        if (error.mismatches > 0) {
          restore();
          e.verdict = Verdict::kIncorrect;
          e.reason = "call check of '" + bench.name + "' (inputs perturbed and outputs poisoned between calls): '" +
                     output.name + "' of call " + std::to_string(want.call + 1) + " of " +
                     std::to_string(original.records.size()) + " differs from the original's on the same input: " +
                     std::to_string(error.mismatches) + " of " + std::to_string(error.values) +
                     " values differ" + (error.unwritten ? " (" + std::to_string(error.unwritten) + " not written)" : "") +
                     "; " + error.first_mismatch;
          e.mismatch = e.reason;
          return false;
        }
        auto [it, fresh] = errors.emplace(output.name, error);
        if (!fresh) merge(it->second, error);
      }
    }
    summary.push_back("'" + bench.name + "': " + std::to_string(records->size()) + " calls, per-call times alike" +
                      (original.perturb && compared > 0
                           ? ", " + std::to_string(compared) + " recorded outputs equal to the original's on perturbed inputs"
                           : ""));
  }
  for (auto& [name, error] : errors) e.precision.push_back(error);
  e.call_check = join(summary, "; ");
  return restore();
}

}  // namespace maxcode
