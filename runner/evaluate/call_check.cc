// The call check and the shimmed runs (call_shim.h, runner/inject/shim_runtime.cc).
//
// Every benchmark timed by the wall clock or by its kernels whose calls of the target
// the shim can see is run, checked and timed alike, on a build of each side with the shim: the original's at setup (the
// benchmark audit, the sizes of outputs the signature does not give, its per-call
// outputs with the reference perturbation), each candidate's before timing (rejected
// when its per-call times show a cache or skipped calls, or when any call's output
// differs from the original's on the same perturbed inputs), and both sides in every
// timing round, with a perturbation drawn for that round (timing.cc). Where no output
// can be compared per call, or the inputs cannot be changed between calls, no claim may
// rest on the benchmark: the verdict is "unverifiable", with what to add. A GPU host
// launcher's pointer arguments are device memory: the runtime sizes them by their
// allocation and copies them through the host (shim_runtime.cc); its runs are timed by
// CUPTI's kernel records as before, held against the original's shimmed run. Where the
// check cannot be made on a GPU benchmark, it keeps the GPU defences it had before the
// shim reached it (per-launch consistency, the launch audit, the witness), with a warning.
#include <algorithm>

#include "runner/evaluate/call_consistency.h"
#include "runner/evaluate/evaluator.h"
#include "runner/evaluate/evaluator_steps.h"
#include "runner/evaluate/output_compare.h"
#include "runner/evaluate/precision.h"
#include "runner/instrument/inject_paths.h"
#include "runner/util/beneath.h"
#include "runner/util/files.h"

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

// Why the call check leaves out a benchmark that checked_by_calls() refuses.
std::string not_checked_by_calls(const BenchmarkConfig&) {
  return "a Google Benchmark program calls the target for as many iterations as fill its time, too many to "
         "record one by one";
}

bool same_interface(const ShimPlan& a, const ShimPlan& b) {
  if (a.params.size() != b.params.size() || a.return_element != b.return_element) return false;
  for (std::size_t i = 0; i < a.params.size(); ++i)
    if (a.params[i].name != b.params[i].name || a.params[i].kind != b.params[i].kind ||
        a.params[i].element != b.params[i].element || a.params[i].size != b.params[i].size)
      return false;
  return true;
}

const CallOutput* find_output(const CallRecord& record, const std::string& name) {
  for (const CallOutput& o : record.outputs)
    if (o.name == name) return &o;
  return nullptr;
}

const CallArg* find_arg(const CallRecord& record, const std::string& name) {
  for (const CallArg& a : record.args)
    if (a.name == name) return &a;
  return nullptr;
}

// What to add so that a benchmark can carry a claim.
constexpr const char* kWhatToAdd =
    "describe the element counts of the target's pointer parameters in .maxcode.json "
    "(\"targets\": {\"interface\": {\"param\": \"n\"}}), or give it a benchmark that passes different inputs "
    "on every call";

}  // namespace

fs::path Evaluator::call_dir(const fs::path& workspace) const {
  return workspace / (".maxcode-calls-" + shim_tag_);
}

// Clears the records directory `dir` and writes the shim's config there. Both lie inside
// the workspace `ws`, which the runs can write: a directory on the way that a run
// replaced by a link is neither followed nor written through (util/beneath.h). Returns
// "" or what made it impossible.
std::string Evaluator::prepare_shim_dir(const fs::path& ws, const fs::path& dir, std::size_t b, std::uint64_t key,
                                        bool discover) const {
  std::string config = "key " + std::to_string(key) + "\ndiscover " + (discover ? "1" : "0") + "\n";
  if (call_baselines_.size() > b && call_baselines_[b]) {
    config += "cap " + std::to_string(call_baselines_[b]->cap) + "\n";
    for (const auto& [name, bytes] : call_baselines_[b]->sizes)
      config += "size " + name + " " + std::to_string(bytes) + "\n";
  }
  std::string unusable;
  if (!remove_beneath(ws, dir, &unusable)) return "the call records' directory cannot be cleared: " + unusable;
  try {
    write_beneath(ws, dir / "config", config);
  } catch (const BeneathError& error) {
    return std::string("the call records' directory cannot be written: ") + error.what();
  }
  return "";
}

std::optional<ShimRun> Evaluator::run_shimmed(Evaluation& e, const fs::path& ws,
                                              const std::map<std::string, std::string>& overrides, std::size_t b,
                                              std::uint64_t key, bool discover, ShimProblem& problem, bool timed,
                                              double* wall_s, int slot, const GpuDevice* device) {
  const BenchmarkConfig& bench = config_.benchmarks[b];
  const bool kernels = bench.metric == "kernels";
  // Two slots, so that the two sides of an A/A round (one workspace) keep their records.
  const fs::path dir = call_dir(ws) / ("run-" + std::to_string(slot >= 0 ? slot : static_cast<int>(shim_slot_++ % 2)) +
                                       "-" + std::to_string(b));
  if (const std::string why = prepare_shim_dir(ws, dir, b, key, discover); !why.empty()) {
    problem = {why, true};
    return std::nullopt;
  }
  std::vector<std::pair<std::string, std::string>> env{{"MAXCODE_SEED", std::to_string(config_.acceptance.seeds.front())},
                                                       {"MAXCODE_SHIM_DIR", dir.string()},
                                                       {"LD_PRELOAD", shim_library_}};
  const std::string label = (timed ? "timing " : std::string("call check ")) + bench.name +
                            (key ? " (perturbed)" : " (observed)");
  // A benchmark timed by its kernels runs under the CUPTI injection, as every run of it
  // does: checked and timed runs look alike to the candidate.
  GpuRun gpu;
  std::vector<std::string> readable{fs::path(shim_library_).parent_path().string()};
  if (kernels) {
    gpu = gpu_run(ws, device ? device : &devices_.front());
    env.insert(env.end(), gpu.env.begin(), gpu.env.end());
    readable.insert(readable.end(), gpu.readable_paths.begin(), gpu.readable_paths.end());
  }
  struct RemoveGpuDir {
    const fs::path& dir;
    ~RemoveGpuDir() {
      std::error_code ec;
      if (!dir.empty()) fs::remove_all(dir, ec);
    }
  } remove_gpu_dir{gpu.dir};
  // A timed run is inside its session's exclusive lock; any other run on the GPU keeps
  // out of every session's rounds (gpu/devices.h).
  std::optional<TimingLock> beside_sessions;
  if (kernels && !timed)
    beside_sessions.emplace(timing_lock_dir(options_.env.lock_dir), (device ? device : &devices_.front())->lock_key(),
                            TimingLock::Mode::kShared);
  std::unique_ptr<ClockMonitor> clock;
  std::unique_ptr<GpuProcessMonitor> processes;
  if (kernels && device && timed) {
    clock = std::make_unique<ClockMonitor>(device->nvml);
    // Every process of the run holding a context on the GPU, to be matched with the
    // processes that reported their kernels.
    processes = monitor_gpu_processes(device->nvml);
  }
  auto r = run_step(e, label, bench.command, ws, bench.timeout_s, overrides, env,
                    [&processes](long pid) {
                      if (processes) processes->started(pid);
                    },
                    readable);
  beside_sessions.reset();
  std::optional<ClockSample> clock_sample;
  GpuProcessCount gpu_processes;
  if (clock) clock_sample = clock->stop();
  if (processes) gpu_processes = processes->stop();
  if (wall_s) *wall_s = r.outcome.wall_s;
  if (!r.tampered.empty()) {
    problem = {r.tampering("the " + label + " run"), true};
    return std::nullopt;
  }
  if (!r.outcome.ok()) {
    problem.reason = "benchmark '" + bench.name + "' " + r.outcome.describe() + " under the call shim" +
              (key ? " with perturbed inputs" : "");
    return std::nullopt;
  }
  ShimRun run;
  run.out = r.outcome.out;
  run.dir = dir;
  run.clock = clock_sample;
  run.gpu_processes = gpu_processes;
  run.root = ws;
  try {
    run.records = read_call_records(dir, ws);
    // The recorded outputs are read later, when compared: each must be a file the run
    // wrote, not a link planted in its place (to a host file the sandbox hides) nor a FIFO.
    for (const CallRecord& record : run.records)
      for (const CallOutput& output : record.outputs) {
        const auto st = lstat_beneath(ws, output.file);
        if (st && !S_ISREG(st->st_mode))
          throw BeneathError(S_ISLNK(st->st_mode) ? BeneathError::Kind::kLink : BeneathError::Kind::kNotRegular,
                             output.file.lexically_relative(ws).generic_string(),
                             S_ISLNK(st->st_mode) ? "it is a symbolic link, not followed" : "not a regular file");
      }
  } catch (const BeneathError& error) {
    // The records' directory or a file in it is not what the shim wrote: the run went
    // behind the harness's back.
    const bool tampered = error.kind() != BeneathError::Kind::kIo;
    problem = {std::string(tampered ? "the benchmark replaced its call records: " : "its call records cannot be read: ") +
                   error.what(),
               tampered};
    return std::nullopt;
  } catch (const std::exception& error) {
    problem.reason = error.what();
    return std::nullopt;
  }
  if (kernels) {
    try {
      run.kernels = gpu_records(gpu);
    } catch (const std::exception& error) {
      // The channel of the records was tampered with, or a record file is unreadable.
      problem = {"benchmark '" + bench.name + "' (" + label + "): " + error.what(), true};
      return std::nullopt;
    }
  }
  return run;
}

std::string Evaluator::compare_shim_runs(std::size_t b, const ShimRun& want, const ShimRun& got,
                                         std::map<std::string, OutputError>* errors) const {
  const BenchmarkConfig& bench = config_.benchmarks[b];
  if (got.records.size() != want.records.size())
    return "it was called " + std::to_string(got.records.size()) + " time(s), the original " +
           std::to_string(want.records.size());
  const std::string total = std::to_string(want.records.size());
  for (std::size_t i = 0; i < want.records.size(); ++i) {
    const CallRecord& w = want.records[i];
    const CallRecord& g = got.records[i];
    // Both sides make the same probes (drawn from the round's key): one missing or added
    // means the shim's state was reached from the candidate's code.
    if (w.probed != g.probed)
      return "call " + std::to_string(i + 1) + " of " + total + (w.probed ? " was" : " was not") +
             " preceded by a probe call in the original's run and" + (g.probed ? " was" : " was not") + " in its own";
    // A call made right after a probe call on other inputs: a result kept from the probe
    // shows here.
    const std::string after_probe = w.probed ? " (called right after a probe call on slightly different inputs)" : "";
    for (const CallArg& arg : w.args) {
      if (!arg.input) continue;
      const CallArg* other = find_arg(g, arg.name);
      if (other && other->entry_hash == arg.entry_hash && other->exit_hash != arg.exit_hash &&
          arg.entry_hash == arg.exit_hash)
        return "call " + std::to_string(i + 1) + " of " + total + " changes its input '" + arg.name +
               "', which the original leaves as it is";
    }
    for (const CallOutput& output : w.outputs) {
      const CallOutput* other = find_output(g, output.name);
      OutputError error;
      if (!other || other->kept != output.kept || other->stride != output.stride || other->offset != output.offset) {
        error.output = output.name;
        error.type = output.type;
        error.mismatches = 1;
        error.first_mismatch = other ? "recorded differently" : "no output recorded";
      } else {
        std::string a, c;
        try {
          // Written inside the runs: read beneath their workspaces, never through a link.
          a = read_beneath(want.root, output.file, kMaxRecordFile);
          c = read_beneath(got.root, other->file, kMaxRecordFile);
        } catch (const std::exception& failure) {
          return std::string("its recorded output could not be read: ") + failure.what();
        }
        error = compare_buffers(output.name, output.type, a, c, bench.rtol, bench.atol);
      }
      if (error.mismatches > 0)
        return "'" + output.name + "' of call " + std::to_string(i + 1) + " of " + total + after_probe +
               " differs from the original's on the same perturbed inputs: " + std::to_string(error.mismatches) +
               " of " + std::to_string(error.values) + " values differ" +
               (error.unwritten ? " (" + std::to_string(error.unwritten) + " not written)" : "") + "; " +
               error.first_mismatch;
      if (errors) {
        auto [it, fresh] = errors->emplace(output.name, error);
        if (!fresh) merge(it->second, error);
      }
    }
  }
  // Last, what it printed: the calls above say more precisely what went wrong.
  if (bench.compare_output) {
    Comparison c = compare_outputs(want.out, got.out, output_tolerance(b));
    if (!c.equal) return "its printed output differs from the original's on the same perturbed inputs: " + c.summary();
  }
  return "";
}

std::string Evaluator::unverifiable_reason() const {
  std::vector<std::string> reasons;
  for (std::size_t b = 0; b < call_baselines_.size(); ++b)
    if (call_baselines_[b] && !call_baselines_[b]->unverifiable.empty())
      reasons.push_back("unverifiable on benchmark '" + config_.benchmarks[b].name + "': " +
                        call_baselines_[b]->unverifiable);
  return join(reasons, "; ");
}

void Evaluator::prepare_call_check() {
  audits_.clear();
  call_baselines_.assign(config_.benchmarks.size(), std::nullopt);
  std::string problem;
  bool any = false;
  for (const BenchmarkConfig& bench : config_.benchmarks) any = any || checked_by_calls(bench);
  if (target_.function.empty()) {
    // `maxcode init` checks the original with no target chosen yet: nothing to wrap.
    shim_plan_ = ShimPlan{};
    problem = "no target function chosen yet";
  } else {
    shim_plan_ = plan_shim(original_file_, extent_, config_.targets.interface);
    problem = shim_plan_.unsupported;
  }
  if (problem.empty() && any) {
    InjectLibraries libs = find_inject_libraries();
    if (libs.shim.empty()) {
      problem = "this maxcode has no libmaxcode_shim.so beside it";
    } else {
      // Copied into the work directory, shown read-only in the sandbox (check.cc).
      fs::create_directories(options_.work_dir / "inject");
      shim_library_ = (options_.work_dir / "inject" / libs.shim.filename()).string();
      fs::copy_file(libs.shim, shim_library_, fs::copy_options::overwrite_existing);
    }
  }
  Evaluation e;
  e.candidate_id = "baseline-calls";
  const fs::path ws = shim_baseline_workspace_ = new_workspace_dir("baseline-calls");
  std::map<std::string, std::string>& overrides = shim_baseline_files_;
  if (problem.empty() && any) {
    progress_.status("baseline: building the original with the call shim");
    overrides[target_.file] = add_call_shim(original_file_, extent_, shim_plan_, {shim_tag_});
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
    in.varying = varying_[b];
    in.shim_problem = problem;
    in.outputs_sized = false;
    if (!checked_by_calls(bench)) in.shim_problem = not_checked_by_calls(bench);
    if (in.shim_problem.empty()) {
      progress_.status("baseline: call check of '" + bench.name + "'");
      CallBaseline baseline;
      ShimProblem why;
      // 1. Observe (no perturbation), finding how far unsized outputs are written.
      auto observed = run_shimmed(e, ws, overrides, b, 0, true, why);
      if (observed) {
        in.observed = observed->records;
        long calls = static_cast<long>(observed->records.size());
        for (const CallRecord& record : observed->records)
          for (const CallExtent& x : record.extents)
            if (x.bytes > 0) baseline.sizes[x.name] = std::max<std::uint64_t>(baseline.sizes[x.name], x.bytes);
        baseline.cap = std::clamp<std::uint64_t>(kRecordBudget / static_cast<std::uint64_t>(std::max(1L, calls)),
                                                 kMinCap, kMaxCap);
        call_baselines_[b] = baseline;  // run_shimmed reads the sizes and the cap from here
        // 2. The reference perturbation, twice: the original must reproduce its own
        // per-call outputs, or nothing can be held against them.
        auto reference = run_shimmed(e, ws, overrides, b, reference_key_, false, why);
        std::optional<ShimRun> again;
        if (reference) {
          const fs::path keep = options_.work_dir / ("calls-original-" + std::to_string(b));
          remove_tree(keep);
          fs::create_directories(keep);
          // The run's files, as they are: a link among them is not the run's record.
          for (const BeneathEntry& entry : list_beneath(ws, reference->dir))
            if (entry.kind == BeneathEntry::Kind::kFile)
              write_text_exact(keep / entry.name, read_beneath(ws, reference->dir / entry.name, kMaxRecordFile));
          reference->dir = keep;
          reference->root = keep;
          for (CallRecord& record : reference->records)
            for (CallOutput& output : record.outputs) output.file = keep / output.file.filename();
          again = run_shimmed(e, ws, overrides, b, reference_key_, false, why);
        }
        if (!reference || !again) {
          in.shim_problem = why.reason;
          baseline.unverifiable = "the benchmark fails under the call shim: " + why.reason;
        } else {
          in.perturbed_output = reference->out;
          baseline.reference = *reference;
          baseline.shimmed = true;
          bool every_call_compared = true, inputs_changed = false;
          for (const CallRecord& record : reference->records) {
            every_call_compared = every_call_compared && !record.outputs.empty();
            for (const CallArg& arg : record.args) inputs_changed = inputs_changed || arg.input;
          }
          for (const CallRecord& record : reference->records)
            for (const CallOutput& output : record.outputs) in.outputs_sized = in.outputs_sized || output.name != "return";
          const std::string reproduced = compare_shim_runs(b, *reference, *again);
          if (reference->records.empty()) {
            // The benchmark never calls the target: nothing on it can be cached or skipped.
          } else if (!every_call_compared) {
            baseline.unverifiable = "no output of '" + target_.function +
                                    "' could be found and compared per call (its pointer parameters have no known "
                                    "size, and it returns no number); " + kWhatToAdd;
          } else if (!inputs_changed) {
            baseline.unverifiable = "the inputs of '" + target_.function +
                                    "' could not be sized, so they are not changed between calls, and a result "
                                    "kept from an earlier call would pass; " + kWhatToAdd;
          } else if (!reproduced.empty()) {
            baseline.unverifiable = "the original does not reproduce its own per-call outputs on the same inputs (" +
                                    reproduced + ")";
          }
        }
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
      call_baselines_[b] = std::move(baseline);
    } else if (checked_by_calls(bench) && !target_.function.empty()) {
      CallBaseline baseline;
      baseline.unverifiable = "the call check cannot be made (" + in.shim_problem + "), so a result kept between "
                              "calls or work skipped on some calls would not be seen; " + kWhatToAdd;
      call_baselines_[b] = std::move(baseline);
    }
    if (bench.metric == "kernels" && call_baselines_[b] && !call_baselines_[b]->unverifiable.empty()) {
      // A GPU benchmark keeps the defences it had before the shim reached GPU launchers
      // (CUPTI's per-launch consistency, the launch audit, the traffic floor, the witness):
      // it is timed plain, not judged unverifiable, and the loss is said.
      warnings_.push_back("no per-call check of the outputs on GPU benchmark '" + bench.name + "': " +
                          call_baselines_[b]->unverifiable +
                          "; it is judged by its kernels' activity only (per-launch consistency, the witness)");
      call_baselines_[b] = std::nullopt;
      in.shim_problem = kTimedByKernels;
    }
    if (call_baselines_[b] && !call_baselines_[b]->unverifiable.empty())
      warnings_.push_back("no speedup can be claimed on benchmark '" + bench.name +
                          "': " + call_baselines_[b]->unverifiable);
    audits_.push_back(audit_benchmark(in));
    for (const std::string& finding : audits_.back().findings)
      if (finding.find("changes with") == std::string::npos)
        warnings_.push_back("benchmark audit of '" + bench.name + "': " + finding);
  }
  bool shimmed = false;
  for (const auto& baseline : call_baselines_) shimmed = shimmed || (baseline && baseline->shimmed);
  if (!shimmed) {
    if (!options_.keep_workspaces) remove_workspace(ws);
    shim_baseline_workspace_.clear();
    shim_baseline_files_.clear();
  }
}

bool Evaluator::call_check(Evaluation& e, Checked& c) {
  bool any = false;
  for (const auto& baseline : call_baselines_) any = any || (baseline && baseline->shimmed);
  if (!any) return true;
  const std::map<std::string, std::string>& files = c.materialized.files;
  const std::string& file = files.at(target_.file);
  std::vector<Extent> found = find_definitions(file, target_.function);
  if (found.size() > 1) {
    std::vector<Extent> same;
    for (const Extent& x : found)
      if (x.signature == extent_.signature) same.push_back(x);
    found = same;
  }
  if (found.size() != 1) {
    e.verdict = Verdict::kRejected;
    e.reason = "call check: the candidate has " + std::to_string(found.size()) + " definitions of '" +
               target_.function + "' with the original's signature";
    return false;
  }
  const ShimPlan plan = plan_shim(file, found.front(), config_.targets.interface);
  if (!plan.unsupported.empty() || !same_interface(plan, shim_plan_)) {
    e.verdict = Verdict::kRejected;
    e.reason = "call check: the candidate changes the parameters of '" + target_.function + "'";
    return false;
  }
  std::map<std::string, std::string> overrides = files;
  overrides[target_.file] = add_call_shim(file, found.front(), plan, {shim_tag_});
  const fs::path ws = c.workspace.string() + "-calls";
  c.calls_workspace = ws;
  c.calls_files = overrides;
  create_workspace(source_, ws, overrides);
  auto step = [&](const std::string& name, const std::string& command) {
    auto r = run_step(e, name, command, ws, config_.build.timeout_s, overrides);
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
  if (!config_.build.configure.empty() && !step("configure", config_.build.configure)) return false;
  if (!step("build", config_.build.command)) return false;
  std::map<std::string, OutputError> errors;
  std::vector<std::string> summary;
  for (std::size_t b = 0; b < call_baselines_.size(); ++b) {
    if (!call_baselines_[b] || !call_baselines_[b]->shimmed) continue;
    const ShimRun& original = call_baselines_[b]->reference;
    const BenchmarkConfig& bench = config_.benchmarks[b];
    ShimProblem problem;
    auto run = run_shimmed(e, ws, overrides, b, reference_key_, false, problem);
    if (!run) {
      e.verdict = problem.tampered ? Verdict::kRejected : Verdict::kCrashed;
      // A limit the shimmed run ran into is the cause, as in every other step.
      if (!problem.tampered && !e.steps.empty() && failure_verdict(e.steps.back(), e.verdict) == Verdict::kLimit)
        e.verdict = Verdict::kLimit;
      e.reason = "call check: " + problem.reason;
      return false;
    }
    const std::string times = check_call_times(call_work_seconds(original.records), call_work_seconds(run->records));
    if (!times.empty()) {
      e.verdict = Verdict::kRejected;
      e.reason = "call check of '" + bench.name + "': " + times;
      return false;
    }
    const std::string differs = compare_shim_runs(b, original, *run, &errors);
    if (!differs.empty()) {
      e.verdict = Verdict::kIncorrect;
      e.reason = "call check of '" + bench.name + "' (inputs perturbed and outputs compared on every call): " + differs;
      e.mismatch = e.reason;
      return false;
    }
    if (run->kernels && original.kernels) {
      // Where its work went, against the original's run under the same shim.
      const std::string why =
          check_gpu_run(b, *run->kernels, selections_[b].seconds(*run->kernels), false, &*original.kernels);
      if (!why.empty()) {
        e.verdict = Verdict::kRejected;
        e.reason = "call check of '" + bench.name + "': " + why;
        return false;
      }
    }
    std::size_t compared = 0, probed = 0;
    double gap_s = 0;
    for (const CallRecord& record : original.records) compared += record.outputs.size();
    for (const CallRecord& record : run->records) {
      probed += record.probed;
      if (record.probed) gap_s = std::max(gap_s, record.probe_gap_s);
    }
    summary.push_back("'" + bench.name + "': " + std::to_string(run->records.size()) +
                      " calls, per-call times alike, " + std::to_string(compared) +
                      " recorded outputs equal to the original's on perturbed inputs" +
                      (probed ? ", " + std::to_string(probed) + " of them right after a probe call (at most " +
                                    format_duration(gap_s) + " between the two)"
                              : ""));
  }
  for (auto& [name, error] : errors) e.precision.push_back(error);
  e.call_check = join(summary, "; ");
  return true;
}

}  // namespace maxcode
