#include "runner/evaluator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "runner/files.h"
#include "runner/gpu/cuda_tools.h"
#include "runner/gpu/ptxas_report.h"
#include "runner/gpu/sanitizer.h"
#include "runner/normalize.h"
#include "runner/output_compare.h"
#include "runner/patch.h"
#include "runner/profile/inject_paths.h"
#include "runner/profile/names.h"
#include "runner/scope.h"

namespace maxcode {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kFeedbackBytes = 8000;

std::string format(const char* fmt, double a, double b = 0, double c = 0) {
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, fmt, a, b, c);
  return buffer;
}

std::string slug(const std::string& id) {
  std::string out;
  for (char ch : id) out += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '-';
  return out.substr(0, 40);
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

// Verdict for a step that did not succeed: running out of time is always `timeout`;
// anything else is the step's own failure kind.
Verdict failure_verdict(const Outcome& outcome, Verdict otherwise) {
  return outcome.timed_out ? Verdict::kTimeout : otherwise;
}

std::string seconds(double s) { return format("%.3f s", s); }

}  // namespace

Evaluator::Evaluator(const Config& config, const SourceSnapshot& source, const Target& target,
                     const Extent& extent, std::vector<Knob> knobs, EvaluatorOptions options,
                     Progress& progress)
    : config_(config),
      source_(source),
      target_(target),
      extent_(extent),
      knobs_(std::move(knobs)),
      options_(std::move(options)),
      progress_(progress),
      rng_(config.search.seed * 0x9E3779B97F4A7C15ull + 17) {
  original_file_ = read_text(source_.root / target_.file);
  baseline_definition_ = original_file_.substr(extent_.begin, extent_.end - extent_.begin);
  gpu_ = uses_gpu_timing(config_);
  if (gpu_) {
    devices_ = visible_gpus(std::getenv("CUDA_VISIBLE_DEVICES"));
    if (devices_.empty())
      throw SetupError("benchmarks are timed by their kernels, but CUDA_VISIBLE_DEVICES hides every GPU");
  }
}

Evaluator::~Evaluator() {
  if (!baseline_workspace_.empty() && !options_.keep_workspaces) remove_workspace(baseline_workspace_);
}

Isolation Evaluator::isolation() const {
  return config_.workspace.isolate ? available_isolation() : Isolation::kNone;
}

fs::path Evaluator::new_workspace_dir(const std::string& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  return options_.work_dir / ("ws-" + std::to_string(++workspace_counter_) + "-" + slug(id));
}

std::vector<std::pair<std::string, std::string>> Evaluator::base_env(const fs::path& ws) const {
  std::vector<std::pair<std::string, std::string>> env{{"MAXCODE_WORKSPACE", ws.string()}};
  if (!options_.ccache_dir.empty()) {
    // Workspaces differ only in their path; BASEDIR/NOHASHDIR let their builds share hits.
    env.insert(env.end(), {{"CCACHE_DIR", options_.ccache_dir.string()},
                           {"CCACHE_BASEDIR", ws.string()},
                           {"CCACHE_NOHASHDIR", "true"},
                           {"CMAKE_C_COMPILER_LAUNCHER", "ccache"},
                           {"CMAKE_CXX_COMPILER_LAUNCHER", "ccache"},
                           {"CMAKE_CUDA_COMPILER_LAUNCHER", "ccache"}});
  }
  if (gpu_ && config_.gpu.ptxas_report) {
    // nvcc reads this in every build system; ptxas then reports registers, spills and
    // shared memory per kernel into the build output (it changes no generated code).
    const char* theirs = std::getenv("NVCC_APPEND_FLAGS");
    env.push_back({"NVCC_APPEND_FLAGS", std::string(theirs && *theirs ? std::string(theirs) + " " : "") + "-Xptxas=-v"});
  }
  return env;
}

std::vector<std::pair<std::string, std::string>> Evaluator::device_env(const GpuDevice* device) const {
  if (!device || device->visible.empty()) return {};
  return {{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}, {"CUDA_VISIBLE_DEVICES", device->visible}};
}

Evaluator::GpuRun Evaluator::gpu_run(const fs::path& ws, const GpuDevice* device) {
  GpuRun r;
  r.dir = ws / ".maxcode-gpu" / std::to_string(++gpu_run_counter_);
  fs::create_directories(r.dir);
  // Check runs and timed runs get the same environment: a candidate cannot tell
  // whether it is being timed.
  r.env = {{"CUDA_INJECTION64_PATH", cupti_library_}, {"MAXCODE_PROFILE_DIR", r.dir.string()}};
  auto pin = device_env(device);
  r.env.insert(r.env.end(), pin.begin(), pin.end());
  return r;
}

Evaluator::Session Evaluator::new_session(int worker) {
  std::lock_guard<std::mutex> lock(mutex_);
  Session s;
  s.rng.seed(rng_());
  if (gpu_) s.device = &devices_.at(static_cast<std::size_t>(worker) % devices_.size());
  return s;
}

int Evaluator::timing_workers() const { return gpu_ ? static_cast<int>(devices_.size()) : 1; }

Evaluator::StepResult Evaluator::run_step(Evaluation& evaluation, const std::string& name,
                                          const std::string& command, const fs::path& workspace,
                                          double timeout_s,
                                          const std::map<std::string, std::string>& overrides,
                                          std::vector<std::pair<std::string, std::string>> extra_env,
                                          bool time_inside) {
  Command cmd;
  cmd.time_inside = time_inside;
  cmd.shell = command;
  cmd.cwd = workspace.string();
  cmd.env = base_env(workspace);
  cmd.env.insert(cmd.env.end(), extra_env.begin(), extra_env.end());
  cmd.timeout_s = timeout_s;
  cmd.output_cap = config_.workspace.output_cap_bytes;
  cmd.isolate = config_.workspace.isolate;
  cmd.writable_paths = {workspace.string()};
  if (!options_.ccache_dir.empty()) cmd.writable_paths.push_back(options_.ccache_dir.string());

  StepResult result{run(cmd), ""};
  evaluation.child_s += result.outcome.wall_s;
  evaluation.isolation = isolation_name(result.outcome.isolation);
  StepRecord record{name, command, result.outcome.describe(), result.outcome.wall_s, ""};
  if (!result.outcome.ok()) record.output_tail = result.outcome.tail(kFeedbackBytes);
  // Whatever ran may have written anywhere in its workspace: prove the sources intact.
  auto tampered = tampered_files(source_, workspace, overrides);
  if (!tampered.empty()) result.tampered = join(tampered, ", ");
  evaluation.steps.push_back(std::move(record));
  return result;
}

bool Evaluator::build_and_test(Evaluation& e, const fs::path& ws,
                               const std::map<std::string, std::string>& overrides) {
  auto tampered = [&](const StepResult& r, const std::string& step) {
    if (r.tampered.empty()) return false;
    e.verdict = Verdict::kRejected;
    e.reason = "source files changed during " + step + ": " + r.tampered;
    return true;
  };
  if (!config_.build.configure.empty()) {
    auto r = run_step(e, "configure", config_.build.configure, ws, config_.build.timeout_s, overrides);
    if (tampered(r, "configure")) return false;
    if (!r.outcome.ok()) {
      e.verdict = failure_verdict(r.outcome, Verdict::kCompileError);
      e.reason = "configure failed: " + r.outcome.describe();
      e.compiler_output = r.outcome.tail(kFeedbackBytes);
      return false;
    }
  }
  auto build = run_step(e, "build", config_.build.command, ws, config_.build.timeout_s, overrides);
  if (tampered(build, "build")) return false;
  if (!build.outcome.ok()) {
    e.verdict = failure_verdict(build.outcome, Verdict::kCompileError);
    e.reason = "build failed: " + build.outcome.describe();
    e.compiler_output = build.outcome.tail(kFeedbackBytes);
    return false;
  }
  if (gpu_ && config_.gpu.ptxas_report) {
    auto kernels = parse_ptxas_report(build.outcome.out + "\n" + build.outcome.err);
    nlohmann::json resources = nlohmann::json::array();
    for (const auto& k : kernels) {
      nlohmann::json j = to_json(k);
      j["demangled"] = demangle(k.kernel);
      resources.push_back(std::move(j));
    }
    e.gpu["resources"] = resources;
    if (!kernels.empty())
      e.gpu["resources_summary"] = describe_resources(kernels, [](const std::string& n) { return demangle(n); });
  }
  auto test = run_step(e, "test", config_.test.command, ws, config_.test.timeout_s, overrides,
                       {{"MAXCODE_SEED", std::to_string(config_.acceptance.seeds.front())}});
  if (tampered(test, "test")) return false;
  if (!test.outcome.ok()) {
    e.verdict = failure_verdict(test.outcome, Verdict::kTestFailed);
    e.reason = "tests failed: " + test.outcome.describe();
    e.test_output = test.outcome.tail(kFeedbackBytes);
    return false;
  }
  return true;
}

bool Evaluator::compare_with_reference(Evaluation& e, const fs::path& ws,
                                       const std::map<std::string, std::string>& overrides) {
  const auto& seeds = config_.acceptance.seeds;
  for (std::size_t b = 0; b < config_.benchmarks.size(); ++b) {
    const BenchmarkConfig& bench = config_.benchmarks[b];
    // A benchmark whose output is not compared still has to run cleanly once.
    const std::size_t runs = bench.compare_output ? seeds.size() : 1;
    for (std::size_t s = 0; s < runs; ++s) {
      const std::string label = "check " + bench.name + " seed=" + std::to_string(seeds[s]);
      std::vector<std::pair<std::string, std::string>> env{{"MAXCODE_SEED", std::to_string(seeds[s])}};
      const bool kernels = bench.metric == "kernels";
      GpuRun gpu;
      if (kernels) {
        gpu = gpu_run(ws, &devices_.front());
        env.insert(env.end(), gpu.env.begin(), gpu.env.end());
      }
      auto r = run_step(e, label, bench.command, ws, bench.timeout_s, overrides, env);
      if (!r.tampered.empty()) {
        e.verdict = Verdict::kRejected;
        e.reason = "source files changed during " + label + ": " + r.tampered;
        return false;
      }
      if (!r.outcome.ok()) {
        e.verdict = failure_verdict(r.outcome, Verdict::kCrashed);
        e.reason = "benchmark '" + bench.name + "' (MAXCODE_SEED=" + std::to_string(seeds[s]) +
                   ") " + r.outcome.describe();
        return false;
      }
      if (bench.compare_output) {
        Comparison c = compare_outputs(reference_[b][s], r.outcome.out, {bench.rtol, bench.atol});
        if (!c.equal) {
          e.verdict = Verdict::kIncorrect;
          e.reason = "output of '" + bench.name + "' differs from the original's (MAXCODE_SEED=" +
                     std::to_string(seeds[s]) + ")";
          e.mismatch = c.summary();
          return false;
        }
      }
      if (kernels) {
        // Where the work went, before any time is spent timing it.
        std::string problem;
        try {
          RunKernels run = read_run_kernels(gpu.dir);
          problem = check_gpu_run(b, run, selections_[b].seconds(run));
          if (s == 0) e.gpu["kernels"] = to_json(run, selections_[b]);
        } catch (const std::exception& error) {
          problem = error.what();
        }
        if (!problem.empty()) {
          e.verdict = Verdict::kRejected;
          e.reason = "benchmark '" + bench.name + "': " + problem;
          return false;
        }
      }
    }
  }
  return true;
}

void Evaluator::prepare_baseline() {
  baseline_workspace_ = new_workspace_dir("baseline");
  create_workspace(source_, baseline_workspace_);
  Evaluation e;
  e.candidate_id = "baseline";
  progress_.status("baseline: building and testing the original");
  if (!build_and_test(e, baseline_workspace_, {})) {
    std::string detail = !e.compiler_output.empty() ? e.compiler_output : e.test_output;
    if (detail.empty() && !e.steps.empty()) detail = e.steps.back().output_tail;
    throw SetupError("the original code does not pass its own checks: " + e.reason +
                     (detail.empty() ? "" : "\n" + detail));
  }
  const auto& seeds = config_.acceptance.seeds;
  reference_.assign(config_.benchmarks.size(), {});
  original_runs_.assign(config_.benchmarks.size(), std::nullopt);
  floors_.assign(config_.benchmarks.size(), 0.0);
  selections_.clear();
  for (std::size_t b = 0; b < config_.benchmarks.size(); ++b)
    selections_.emplace_back(std::vector<std::string>{}, std::set<std::string>{}, 0);
  if (gpu_) {
    InjectLibraries libs = find_inject_libraries();
    if (libs.cupti.empty())
      throw SetupError("benchmarks are timed by their kernels (metric \"kernels\"), but this maxcode has "
                       "no CUPTI injection library (libmaxcode_cupti.so) beside it");
    // Copied into the work directory: a sandbox may give the benchmark a private /tmp.
    fs::create_directories(options_.work_dir / "inject");
    cupti_library_ = (options_.work_dir / "inject" / libs.cupti.filename()).string();
    fs::copy_file(libs.cupti, cupti_library_, fs::copy_options::overwrite_existing);
  }
  for (std::size_t b = 0; b < config_.benchmarks.size(); ++b) {
    const BenchmarkConfig& bench = config_.benchmarks[b];
    const bool kernels = bench.metric == "kernels";
    for (std::size_t s = 0; s < seeds.size(); ++s) {
      progress_.status("baseline: reference output of '" + bench.name + "' for seed " +
                       std::to_string(seeds[s]));
      std::vector<std::pair<std::string, std::string>> env{{"MAXCODE_SEED", std::to_string(seeds[s])}};
      GpuRun gpu;
      if (kernels) {
        gpu = gpu_run(baseline_workspace_, &devices_.front());
        env.insert(env.end(), gpu.env.begin(), gpu.env.end());
      }
      auto r = run_step(e, "reference " + bench.name, bench.command, baseline_workspace_,
                        bench.timeout_s, {}, env);
      if (!r.outcome.ok() || !r.tampered.empty())
        throw SetupError("benchmark '" + bench.name + "' fails on the original code (MAXCODE_SEED=" +
                         std::to_string(seeds[s]) + "): " +
                         (r.tampered.empty() ? r.outcome.describe() : "it changed " + r.tampered) +
                         "\n" + r.outcome.tail(2000));
      reference_[b].push_back(r.outcome.out);
      if (kernels && s == 0) {
        RunKernels run;
        try {
          run = read_run_kernels(gpu.dir);
        } catch (const std::exception& error) {
          throw SetupError(std::string("benchmark '") + bench.name + "': " + error.what());
        }
        if (run.processes == 0)
          throw SetupError("benchmark '" + bench.name + "' is timed by its kernels, but no GPU activity "
                           "was recorded: it does not use CUDA, or CUPTI could not attach");
        if (!run.messages.empty())
          throw SetupError("benchmark '" + bench.name + "': CUPTI reported: " + join(run.messages, "; "));
        std::set<std::string> names;
        for (const auto& [name, k] : run.kernels) names.insert(name);
        selections_[b] = KernelSelection(bench.kernels, names, bench.warmup_launches);
        if (selections_[b].counted_launches(run) == 0)
          throw SetupError("benchmark '" + bench.name + "': no kernel to time (" +
                           std::to_string(run.kernels.size()) + " kernel(s) ran, none matched \"kernels\" "
                           "past the " + std::to_string(bench.warmup_launches) + " warm-up launch(es))");
        original_runs_[b] = std::move(run);
      }
    }
    if (!bench.compare_output) continue;
    // The reference is only a reference if the original reproduces it.
    auto again = run_step(e, "reference " + bench.name + " (repeat)", bench.command,
                          baseline_workspace_, bench.timeout_s, {},
                          {{"MAXCODE_SEED", std::to_string(seeds[0])}});
    Comparison c = compare_outputs(reference_[b][0], again.outcome.out, {bench.rtol, bench.atol});
    if (!again.outcome.ok() || !c.equal)
      throw SetupError("benchmark '" + bench.name +
                       "' prints different output for the same MAXCODE_SEED on the original "
                       "code, so candidates cannot be checked against it: " + c.summary());
    bool all_same = true;
    for (const auto& out : reference_[b]) all_same = all_same && out == reference_[b][0];
    if (all_same)
      warnings_.push_back("benchmark '" + bench.name + "' prints the same output for every "
                          "MAXCODE_SEED: it seems to ignore the seed, so every candidate is "
                          "checked on one input only");
    if (all_numbers_zero(reference_[b][0]))
      warnings_.push_back("benchmark '" + bench.name + "' prints no non-zero number: comparing "
                          "its output proves little about correctness");
    if (reference_[b][0].empty())
      warnings_.push_back("benchmark '" + bench.name + "' prints nothing: its output cannot show "
                          "a wrong result");
  }
  if (gpu_) prepare_gpu();
  if (isolation() == Isolation::kNone && config_.workspace.isolate)
    warnings_.push_back("neither bubblewrap nor unshare works here: candidate code runs with "
                        "the network reachable and the file system writable");
}

Materialized Evaluator::materialize(const Candidate& candidate) const {
  Materialized m;
  m.candidate = candidate;
  std::string file = original_file_;
  if (candidate.error) {
    m.rejection = *candidate.error;
    return m;
  }
  try {
    if (candidate.definition && candidate.diff) {
      m.rejection = "candidate gives both a definition and a diff";
      return m;
    }
    if (candidate.definition) {
      file = replace_definition(original_file_, extent_, *candidate.definition);
      m.code = *candidate.definition;
    } else if (candidate.diff) {
      std::map<std::string, std::string> originals;
      for (const auto& touched : files_in_diff(*candidate.diff)) {
        for (std::string path : {touched.old_path, touched.new_path}) {
          if (path.empty()) continue;
          // Diffs made from the top of an enclosing git work tree carry its prefix.
          if (!source_.git_prefix.empty() && path.rfind(source_.git_prefix, 0) == 0)
            path = path.substr(source_.git_prefix.size());
          if (path != target_.file) {
            m.rejection = "candidate changes " + path + "; only " + target_.file +
                          " (the target function and new helpers beside it) may change";
            return m;
          }
        }
        if (touched.new_path.empty()) {
          m.rejection = "candidate deletes " + target_.file;
          return m;
        }
      }
      std::string diff = *candidate.diff;
      // Re-root a prefixed diff onto the snapshot's paths.
      if (!source_.git_prefix.empty()) {
        std::string prefixed_a = "a/" + source_.git_prefix, prefixed_b = "b/" + source_.git_prefix;
        for (const auto& [from, to] : {std::pair{prefixed_a, std::string("a/")},
                                       std::pair{prefixed_b, std::string("b/")},
                                       std::pair{" " + source_.git_prefix, std::string(" ")}}) {
          for (std::size_t at = diff.find(from); at != std::string::npos; at = diff.find(from, at))
            diff.replace(at, from.size(), to);
        }
      }
      auto applied = apply_diff(diff, {{target_.file, original_file_}});
      file = applied.at(target_.file);
      m.code = *candidate.diff;
    }
    std::vector<KnobLine> knob_lines;
    for (const Knob& knob : knobs_) knob_lines.push_back({knob.name, knob.values});
    const ScopeVerdict scope =
        check_target_file(original_file_, file, extent_, target_.function, target_.file, knob_lines);
    if (!scope.ok) {
      m.rejection = scope.reason;
      return m;
    }
    for (const auto& [name, value] : candidate.knobs) {
      auto knob = std::find_if(knobs_.begin(), knobs_.end(), [&](const Knob& k) { return k.name == name; });
      if (knob == knobs_.end()) {
        m.rejection = "unknown knob '" + name + "'";
        return m;
      }
      if (std::find(knob->values.begin(), knob->values.end(), value) == knob->values.end()) {
        m.rejection = "knob " + name + "=" + value + " is not one of its declared values";
        return m;
      }
      if (m.code.empty() || m.code.rfind("knobs:", 0) == 0)
        m.code = (m.code.empty() ? "knobs:" : m.code) + " " + name + "=" + value;
    }
    m.files[target_.file] = file;
    for (const Knob& knob : knobs_) {  // knobs may live in other files (config)
      if (!candidate.knobs.count(knob.name)) continue;
      auto it = m.files.find(knob.file);
      const std::string before = it != m.files.end() ? it->second : read_text(source_.root / knob.file);
      m.files[knob.file] = apply_knobs(before, knob.file, knobs_, candidate.knobs);
    }
  } catch (const std::exception& e) {
    m.rejection = e.what();
    return m;
  }
  // Comments and layout do not make a different candidate.
  std::string all;
  for (const auto& [path, content] : m.files) all += path + '\0' + normalize_code(content) + '\0';
  m.source_hash = sha256_hex(all);
  return m;
}

Checked Evaluator::check(const Materialized& candidate) {
  const auto start = std::chrono::steady_clock::now();
  Checked c;
  c.materialized = candidate;
  Evaluation& e = c.evaluation;
  e.candidate_id = candidate.candidate.id;
  e.source_hash = candidate.source_hash;
  e.code = candidate.code;
  auto finish = [&] {
    e.wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  if (!candidate.rejection.empty()) {
    e.verdict = Verdict::kRejected;
    e.reason = candidate.rejection;
    finish();
    return c;
  }
  try {
    c.workspace = new_workspace_dir(candidate.candidate.id);
    create_workspace(source_, c.workspace, candidate.files);
    c.passed = build_and_test(e, c.workspace, candidate.files) &&
               compare_with_reference(e, c.workspace, candidate.files);
  } catch (const std::exception& error) {
    e.verdict = Verdict::kRejected;
    e.reason = std::string("could not evaluate: ") + error.what();
    c.passed = false;
  }
  if (!c.passed) release(c);
  finish();
  return c;
}

double Evaluator::run_suite(Session& session, const fs::path& ws,
                            const std::map<std::string, std::string>& overrides,
                            std::string& failure, Verdict& failure_verdict_out) {
  double total = 0;
  const std::uint64_t seed = config_.acceptance.seeds.front();
  session.clock.reset();
  for (std::size_t b = 0; b < config_.benchmarks.size(); ++b) {
    const BenchmarkConfig& bench = config_.benchmarks[b];
    const bool kernels = bench.metric == "kernels";
    Evaluation scratch;
    std::vector<std::pair<std::string, std::string>> env{{"MAXCODE_SEED", std::to_string(seed)}};
    GpuRun gpu;
    if (kernels) {
      gpu = gpu_run(ws, session.device);
      env.insert(env.end(), gpu.env.begin(), gpu.env.end());
    }
    std::optional<ClockSample> clock;
    StepResult r;
    {
      ClockMonitor monitor(kernels && session.device ? session.device->nvml : std::nullopt);
      r = run_step(scratch, "timing " + bench.name, bench.command, ws, bench.timeout_s, overrides,
                   env, /*time_inside=*/true);
      clock = monitor.stop();
    }
    if (!r.tampered.empty()) {
      failure = "source files changed during timing: " + r.tampered;
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
      Comparison c = compare_outputs(reference_[b][0], r.outcome.out, {bench.rtol, bench.atol});
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
        RunKernels run = read_run_kernels(gpu.dir);
        seconds = selections_[b].seconds(run);
        problem = check_gpu_run(b, run, seconds);
        session.kernels = to_json(run, selections_[b]);
      } catch (const std::exception& error) {
        problem = error.what();
      }
      std::error_code ec;
      fs::remove_all(gpu.dir, ec);
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
    // The command's own time, measured inside the sandbox; the outer time (sandbox
    // start-up included) only if the inner one is missing.
    const double wall = r.outcome.inner_wall_s >= 0 ? r.outcome.inner_wall_s : r.outcome.wall_s;
    total += wall;
    session.child_s += wall;
  }
  return total;
}

Timing Evaluator::ab_session(Session& session, const std::string& label, const fs::path& candidate_ws,
                             const std::map<std::string, std::string>& overrides,
                             std::string& failure, Verdict& verdict) {
  const AcceptanceConfig& acc = config_.acceptance;
  Timing t;
  t.noise_floor = noise_floor_;
  t.min_speedup = acc.min_speedup;
  // One A/B session per GPU at a time, across every maxcode process on this machine.
  std::optional<TimingLock> lock;
  if (session.device) {
    t.device = session.device->label();
    lock.emplace(timing_lock_dir(), session.device->lock_key());
  }
  const auto start = std::chrono::steady_clock::now();
  std::bernoulli_distribution coin(0.5);
  nlohmann::json candidate_kernels;  // what the candidate's last run launched
  for (int round = -acc.warmup_rounds;; ++round) {
    // Random order within each round: a drift (thermal, caches, other load) cannot
    // favour whichever side always runs second.
    const bool baseline_first = coin(session.rng);
    double times[2] = {0, 0};
    std::optional<ClockSample> clocks[2];
    for (int k = 0; k < 2; ++k) {
      const bool baseline_side = (k == 0) == baseline_first;
      std::string side_failure;
      Verdict side_verdict = Verdict::kCrashed;
      double s = baseline_side ? run_suite(session, baseline_workspace_, {}, side_failure, side_verdict)
                               : run_suite(session, candidate_ws, overrides, side_failure, side_verdict);
      if (s < 0) {
        if (baseline_side)
          throw SetupError("the original failed during timing: " + side_failure);
        failure = side_failure;
        verdict = side_verdict;
        return t;
      }
      times[baseline_side ? 0 : 1] = s;
      clocks[baseline_side ? 0 : 1] = session.clock;
      if (!baseline_side) candidate_kernels = session.kernels;
    }
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
    if (t.speedup.relative_width() <= acc.target_relative_width) t.stop_reason = "interval narrow";
    else if (rounds >= acc.max_rounds) t.stop_reason = "max rounds";
    else if (elapsed >= acc.max_timing_s) t.stop_reason = "time cap";
    if (!t.stop_reason.empty()) break;
  }
  session.kernels = candidate_kernels;
  t.baseline_median_s = median(t.baseline_s);
  t.candidate_median_s = median(t.candidate_s);
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

Timing Evaluator::measure_noise() {
  std::string failure;
  Verdict verdict = Verdict::kCrashed;
  noise_floor_ = 1.0;
  Session session = new_session(0);
  Timing aa = ab_session(session, "A/A noise", baseline_workspace_, {}, failure, verdict);
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
  Timing t = ab_session(session, e.candidate_id, c.workspace, c.materialized.files, failure, verdict);
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
  std::string figure = format("%.3fx (95%% CI %.3f-%.3f", s.median, s.low, s.high) + ", " +
                       std::to_string(s.rounds) + " rounds)";
  if (t.roofline_floor_s > 0)
    figure += format(", %.0f%% of roofline (original %.0f%%)", 100 * t.roofline_floor_s / t.candidate_median_s,
                     100 * t.roofline_floor_s / t.baseline_median_s);
  if (t.throttled_rounds() > 0)
    figure += ", " + std::to_string(t.throttled_rounds()) + " round(s) with the GPU clock held down";
  if (t.significant) {
    e.verdict = Verdict::kFaster;
    e.reason = figure;
    // Would win: prove it memory- and race-clean first (DESIGN.md "Correctness" 3).
    if (gpu_ && !sanitize(e, c.workspace, c.materialized.files, session.device)) c.passed = false;
  } else {
    e.verdict = Verdict::kNotFaster;
    e.reason = figure + ": lower bound below " +
               format("%.3f", std::max(t.min_speedup, t.noise_floor)) +
               (t.noise_floor > t.min_speedup ? " (A/A noise floor)" : " (minimum speedup)");
  }
}

Timing Evaluator::confirm(Checked& c) {
  std::string failure;
  Verdict verdict = Verdict::kCrashed;
  Session session = new_session(0);
  Timing t = ab_session(session, c.evaluation.candidate_id + " (confirm)", c.workspace,
                        c.materialized.files, failure, verdict);
  if (!failure.empty()) {
    t.significant = false;
    t.stop_reason = "failed: " + failure;
  }
  return t;
}

std::string Evaluator::check_gpu_run(std::size_t b, const RunKernels& run, double seconds) const {
  if (run.processes == 0)
    return "no GPU activity was recorded (CUPTI could not attach, or the program used no CUDA)";
  if (run.dropped > 0)
    return "CUPTI lost " + std::to_string(run.dropped) + " activity records: the kernel time would be incomplete";
  if (original_runs_[b]) {
    std::string why = check_against_baseline(*original_runs_[b], run, selections_[b]);
    if (!why.empty()) return why;
  }
  if (floors_[b] > 0 && seconds < floors_[b])
    return format("faster than the hardware allows: %.4f ms of kernel time is below the roofline floor of "
                  "%.4f ms (the declared minimum work at the GPU's peak rates)",
                  seconds * 1e3, floors_[b] * 1e3);
  return {};
}

void Evaluator::prepare_gpu() {
  // The original through each sanitizer tool: a tool it fails already cannot judge a
  // candidate, so it is left out with a warning instead of rejecting everything.
  const std::string sanitizer = find_cuda_tool("compute-sanitizer");
  if (config_.gpu.sanitizer.empty()) {
    // nothing asked for
  } else if (sanitizer.empty()) {
    warnings_.push_back("compute-sanitizer not found: GPU winners are not checked for memory errors and races");
  } else {
    for (const std::string& tool : config_.gpu.sanitizer) {
      progress_.status("baseline: compute-sanitizer " + tool);
      Evaluation scratch;
      scratch.gpu = nlohmann::json::object();
      if (sanitize_with(scratch, baseline_workspace_, {}, &devices_.front(), sanitizer, tool))
        sanitizer_tools_.push_back(tool);
      else
        warnings_.push_back("the original itself fails compute-sanitizer " + tool + " (" + scratch.reason +
                            "): candidates are not checked with it");
    }
  }
  if (config_.gpu.ncu) {
    progress_.status("baseline: Nsight Compute metrics of the top kernels");
    baseline_ncu_ = ncu_metrics(nullptr);
    for (const NcuKernel& k : baseline_ncu_) {
      peak_bytes_per_s_ = std::max(peak_bytes_per_s_, k.peak_bytes_per_s);
      peak_flops_per_s_ = std::max(peak_flops_per_s_, k.peak_flops_per_s);
    }
  }
  for (std::size_t b = 0; b < config_.benchmarks.size(); ++b) {
    const BenchmarkConfig& bench = config_.benchmarks[b];
    if (bench.metric != "kernels" || (bench.roofline_bytes <= 0 && bench.roofline_flops <= 0)) continue;
    if (peak_bytes_per_s_ <= 0) {
      warnings_.push_back("benchmark '" + bench.name + "' declares a roofline, but the GPU's peak rates are "
                          "unknown (they come from Nsight Compute): times below it are not caught");
      continue;
    }
    floors_[b] = roofline_floor_s(bench.roofline_bytes, bench.roofline_flops, peak_bytes_per_s_, peak_flops_per_s_);
  }
}

bool Evaluator::sanitize(Evaluation& e, const fs::path& ws, const std::map<std::string, std::string>& overrides,
                         const GpuDevice* device) {
  const std::string sanitizer = find_cuda_tool("compute-sanitizer");
  for (const std::string& tool : sanitizer_tools_) {
    progress_.status(e.candidate_id + ": compute-sanitizer " + tool);
    if (!sanitize_with(e, ws, overrides, device, sanitizer, tool)) return false;
  }
  return true;
}

bool Evaluator::sanitize_with(Evaluation& e, const fs::path& ws, const std::map<std::string, std::string>& overrides,
                              const GpuDevice* device, const std::string& sanitizer, const std::string& tool) {
  std::vector<std::string> commands;
  if (config_.gpu.sanitize == "test") commands.push_back(config_.test.command);
  else
    for (const BenchmarkConfig& bench : config_.benchmarks) commands.push_back(bench.command);
  for (const std::string& command : commands) {
    auto env = device_env(device);
    env.push_back({"MAXCODE_SEED", std::to_string(config_.acceptance.seeds.front())});
    auto r = run_step(e, "compute-sanitizer " + tool, shell_command(sanitizer_argv(sanitizer, tool, command)), ws,
                      config_.gpu.sanitizer_timeout_s, overrides, env);
    const SanitizerReport report = parse_sanitizer_output(r.outcome.err + "\n" + r.outcome.out, tool);
    nlohmann::json record = {{"tool", tool}, {"command", command}, {"errors", report.errors},
                             {"status", r.outcome.describe()}};
    if (!report.excerpt.empty()) record["excerpt"] = report.excerpt;
    e.gpu["sanitizer"].push_back(record);
    if (!r.tampered.empty()) {
      e.verdict = Verdict::kRejected;
      e.reason = "source files changed under compute-sanitizer: " + r.tampered;
      return false;
    }
    if (report.errors > 0 || r.outcome.exit_code == kSanitizerErrorExit) {
      e.verdict = Verdict::kRejected;
      e.reason = "compute-sanitizer " + describe(report);
      return false;
    }
    if (!r.outcome.ok() || !report.summary_seen) {
      e.verdict = failure_verdict(r.outcome, Verdict::kCrashed);
      e.reason = "under compute-sanitizer " + tool + ", '" + command + "' " + r.outcome.describe();
      return false;
    }
  }
  return true;
}

std::vector<NcuKernel> Evaluator::ncu_metrics(const Checked* checked) {
  const std::string ncu = find_cuda_tool("ncu");
  if (!gpu_ || !config_.gpu.ncu) return {};
  auto warn = [&](const std::string& what) {
    std::lock_guard<std::mutex> lock(mutex_);
    warnings_.push_back("Nsight Compute: " + what);
    return std::vector<NcuKernel>{};
  };
  if (ncu.empty()) return warn("ncu not found: no hardware metrics for critiques and no roofline check");
  // The first benchmark timed by kernels; its top kernels by counted time.
  std::size_t b = 0;
  while (b < config_.benchmarks.size() && config_.benchmarks[b].metric != "kernels") ++b;
  if (b == config_.benchmarks.size() || !original_runs_[b]) return {};
  std::vector<std::pair<std::uint64_t, std::string>> ranked;
  auto add_kernels = [&](const nlohmann::json& kernels) {
    for (const auto& k : kernels)
      if (k.value("counted", false)) ranked.push_back({k.value("total_ns", std::uint64_t{0}), k.value("name", "")});
  };
  if (checked) add_kernels(checked->evaluation.gpu.value("kernels", nlohmann::json::object()).value("kernels", nlohmann::json::array()));
  else add_kernels(to_json(*original_runs_[b], selections_[b])["kernels"]);
  std::sort(ranked.rbegin(), ranked.rend());
  std::vector<std::string> names;
  for (const auto& [ns, demangled] : ranked) {
    std::string base = function_name_of(demangled);
    if (auto colon = base.rfind("::"); colon != std::string::npos) base = base.substr(colon + 2);
    if (auto angle = base.find('<'); angle != std::string::npos) base = base.substr(0, angle);
    if (!base.empty() && std::find(names.begin(), names.end(), base) == names.end()) names.push_back(base);
    if (static_cast<int>(names.size()) >= config_.gpu.ncu_kernels) break;
  }
  if (names.empty()) return warn("no counted kernel to profile");
  const fs::path ws = checked ? checked->workspace : baseline_workspace_;
  const fs::path log = ws / ".maxcode-gpu" / ("ncu-" + std::to_string(++gpu_run_counter_) + ".csv");
  fs::create_directories(log.parent_path());
  const BenchmarkConfig& bench = config_.benchmarks[b];
  auto env = device_env(&devices_.front());
  env.push_back({"MAXCODE_SEED", std::to_string(config_.acceptance.seeds.front())});
  Evaluation scratch;
  const int launches = static_cast<int>(names.size()) * 2;
  auto r = run_step(scratch, "ncu", shell_command(ncu_argv(ncu, names, bench.warmup_launches, launches, log.string(), bench.command)),
                    ws, config_.gpu.ncu_timeout_s, checked ? checked->materialized.files : std::map<std::string, std::string>{}, env);
  if (!r.outcome.ok()) return warn("ncu " + r.outcome.describe() + ": " + r.outcome.tail(600));
  try {
    std::vector<NcuKernel> kernels = parse_ncu_csv(read_text(log));
    if (kernels.empty()) return warn("no kernel matched " + join(names, ", ") + " in " + bench.command);
    return kernels;
  } catch (const std::exception& error) {
    return warn(error.what());
  }
}

void Evaluator::release(Checked& c) noexcept {
  if (!c.workspace.empty() && !options_.keep_workspaces) remove_workspace(c.workspace);
  c.workspace.clear();
}

}  // namespace maxcode
