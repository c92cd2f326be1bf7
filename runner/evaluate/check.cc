// Step 2: build, test and compare outputs with the original's (and, first, make the
// original the reference). Safe for several candidates at once.
#include "runner/evaluate/evaluator.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "runner/core/command_limits.h"
#include "runner/evaluate/evaluator_steps.h"
#include "runner/evaluate/leftover_processes.h"
#include "runner/instrument/google_benchmark.h"
#include "runner/evaluate/gpu/ptxas_report.h"
#include "runner/evaluate/output_compare.h"
#include "runner/instrument/inject_paths.h"
#include "runner/util/beneath.h"
#include "runner/util/files.h"
#include "runner/util/format.h"
#include "runner/util/names.h"
#include "runner/workspace/patch.h"
#include "runner/core/candidate_env.h"

namespace maxcode {

namespace fs = std::filesystem;
using namespace evaluator_steps;

std::string Evaluator::StepResult::tampering(const std::string& during) const {
  std::vector<std::string> parts;
  if (!sources.empty()) parts.push_back("source files changed during " + during + ": " + join(sources, ", "));
  if (!outputs.empty()) parts.push_back("build outputs changed during " + during + ": " + outputs);
  if (!left_running.empty()) parts.push_back("left a process running after " + during + ": " + left_running);
  return join(parts, "; ");
}

std::shared_ptr<const BuildSeal> Evaluator::seal_of(const fs::path& workspace) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = seals_.find(workspace);
  return found == seals_.end() ? nullptr : found->second;
}

Evaluator::StepResult Evaluator::run_step(Evaluation& evaluation, const std::string& name,
                                          const std::string& command, const fs::path& workspace,
                                          double timeout_s,
                                          const std::map<std::string, std::string>& overrides,
                                          std::vector<std::pair<std::string, std::string>> extra_env,
                                          std::function<void(long pid)> started,
                                          std::vector<std::string> readable_paths) {
  // A step that builds (the project's configure or build command, also as the call
  // check rebuilds) seals what it wrote; every other step runs on sealed outputs and
  // must leave them as they were, and no process behind it.
  const bool builds = command == config_.build.command ||
                      (!config_.build.configure.empty() && command == config_.build.configure);
  Command cmd;
  cmd.started = std::move(started);
  cmd.shell = command;
  cmd.cwd = workspace.string();
  // Candidate code sees an allow-listed environment, never maxcode's (model keys, tokens).
  std::vector<std::pair<std::string, std::string>> step_env = base_env(workspace);
  // The compiler cache outlives this run, and later runs take its objects on trust: only
  // the original's builds (the user's code as committed) write it. A candidate's build
  // reads it (CCACHE_READONLY, its scratch files in the workspace), and no step that
  // runs candidate code can write it: a poisoned object of the original would make a
  // copy of the original look faster in a later run.
  const bool writes_cache = builds && (workspace == baseline_workspace_ || workspace == shim_baseline_workspace_);
  if (!options_.ccache_dir.empty() && !writes_cache)
    step_env.insert(step_env.end(), {{"CCACHE_READONLY", "true"},
                                     {"CCACHE_TEMPDIR", (workspace / ".maxcode-ccache-tmp").string()}});
  step_env.insert(step_env.end(), extra_env.begin(), extra_env.end());
  cmd.env = candidate_env(config_, process_environment(), workspace / ".maxcode-home", step_env);
  cmd.parent_env = ParentEnv::kDrop;
  cmd.timeout_s = timeout_s;
  cmd.output_cap = config_.workspace.output_cap_bytes;
  cmd.isolate = config_.workspace.isolate;
  apply_workspace_limits(cmd, config_.workspace);
  cmd.writable_paths = {workspace.string()};
  if (!options_.ccache_dir.empty() && writes_cache) cmd.writable_paths.push_back(options_.ccache_dir.string());
  // The injection libraries live in the work directory, which the private /tmp hides;
  // shown read-only, so that a candidate cannot replace the profiler that times it.
  if (!cupti_library_.empty()) cmd.readable_paths = {fs::path(cupti_library_).parent_path().string()};
  if (!options_.ccache_dir.empty() && !writes_cache) cmd.readable_paths.push_back(options_.ccache_dir.string());
  // And the directory of the profiler's socket, which the run reports through.
  cmd.readable_paths.insert(cmd.readable_paths.end(), readable_paths.begin(), readable_paths.end());
  // And what the build declares it needs of the host.
  cmd.readable_paths.insert(cmd.readable_paths.end(), config_.workspace.sandbox_paths.begin(),
                            config_.workspace.sandbox_paths.end());
  // Run by root, the sandbox runs the command as an unprivileged user, who must be able
  // to write the workspace (and the cache, for the original's builds). What it owns
  // already is left alone, so that no sealed output changes.
  if (cmd.isolate) {
    for (const auto& path : cmd.writable_paths) hand_to_sandbox_user(path);
  }

  std::set<std::string> not_outputs;  // the sources, proven by tampered_files instead
  if (builds) {
    for (const auto& [path, hash] : source_.manifest) not_outputs.insert(path);
    for (const auto& [path, content] : overrides) not_outputs.insert(path);
  }
  const std::shared_ptr<const BuildSeal> seal = seal_of(workspace);
  StepResult result;
  StepRecord record{name, command, "", 0, ""};
  if (seal) {
    // Nothing may run what changed since the last step ended.
    if (auto breaks = verify_seal(workspace, *seal); !breaks.empty()) {
      result.outputs = describe(breaks);
      result.outcome.spawn_failed = true;
      result.outcome.spawn_error = "not run: build outputs changed since they were built: " + result.outputs;
    }
  }
  const bool runs = result.outputs.empty();
  std::map<std::string, FileStat> before;
  if (builds && runs) before = stat_tree(workspace, not_outputs);
  const Isolation isolation = cmd.isolate ? available_isolation() : Isolation::kNone;
  const bool watch = !builds && can_watch_for_leftovers(isolation);
  if (watch) cmd.shell = watch_for_leftovers(command);

  result.outcome.isolation = isolation;
  if (runs) result.outcome = run_isolated(cmd, isolation);
  if (watch) result.left_running = take_leftovers(result.outcome);
  evaluation.child_s += result.outcome.wall_s;
  evaluation.isolation = isolation_name(result.outcome.isolation);
  record.status = result.outcome.describe();
  record.wall_s = result.outcome.wall_s;
  if (!result.outcome.ok()) record.output_tail = result.outcome.tail(kFeedbackBytes);
  // Whatever ran may have written anywhere in its workspace: prove the sources intact,
  // and the build outputs.
  result.sources = tampered_files(source_, workspace, overrides);
  if (builds && runs) {
    auto sealed = std::make_shared<const BuildSeal>(seal_build(workspace, before, seal ? *seal : BuildSeal{}, not_outputs));
    std::lock_guard<std::mutex> lock(mutex_);
    seals_[workspace] = std::move(sealed);
  } else if (seal && runs) {
    result.outputs = describe(verify_seal(workspace, *seal));
  }
  std::vector<std::string> tampered = result.sources;
  if (!result.outputs.empty()) tampered.push_back("build outputs " + result.outputs);
  if (!result.left_running.empty()) tampered.push_back("processes left running: " + result.left_running);
  result.tampered = join(tampered, ", ");
  evaluation.steps.push_back(std::move(record));
  return result;
}

bool Evaluator::build_and_test(Evaluation& e, const fs::path& ws,
                               const std::map<std::string, std::string>& overrides) {
  auto tampered = [&](const StepResult& r, const std::string& during) {
    if (r.tampered.empty()) return false;
    e.verdict = Verdict::kRejected;
    e.reason = r.tampering(during);
    return true;
  };
  if (!config_.build.configure.empty()) {
    auto r = run_step(e, "configure", config_.build.configure, ws, config_.build.timeout_s, overrides);
    if (tampered(r, "the configure step")) return false;
    if (!r.outcome.ok()) {
      e.verdict = failure_verdict(r.outcome, Verdict::kCompileError);
      e.reason = "configure failed: " + r.outcome.describe();
      e.compiler_output = r.outcome.tail(kFeedbackBytes);
      return false;
    }
  }
  auto build = run_step(e, "build", config_.build.command, ws, config_.build.timeout_s, overrides);
  if (tampered(build, "the build")) return false;
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
  // The frameworks report into a fresh folder of the workspace (test_results.h).
  const fs::path results = test_results_dir(ws);
  fs::remove_all(results);
  fs::create_directories(results);
  std::vector<std::pair<std::string, std::string>> test_vars{
      {"MAXCODE_SEED", std::to_string(config_.acceptance.seeds.front())}};
  for (auto& v : test_env(results)) test_vars.push_back(std::move(v));
  std::vector<std::string> tools;
  if (!test_tools_dir_.empty()) tools.push_back(test_tools_dir_.string());
  auto test = run_step(e, "test", config_.test.command, ws, config_.test.timeout_s, overrides, test_vars, {}, tools);
  if (tampered(test, "the tests")) return false;
  if (!test.outcome.ok()) {
    e.verdict = failure_verdict(test.outcome, Verdict::kTestFailed);
    e.reason = "tests failed: " + test.outcome.describe();
    e.test_output = test.outcome.tail(kFeedbackBytes);
    return false;
  }
  // An exit code of 0 is not the last word where a framework says more.
  if (!judge_tests(e, ws)) {
    e.test_output = test.outcome.tail(kFeedbackBytes);
    return false;
  }
  return true;
}

fs::path Evaluator::test_results_dir(const fs::path& workspace) const {
  return workspace / (".maxcode-tests-" + shim_tag_);
}

std::vector<std::pair<std::string, std::string>> Evaluator::test_env(const fs::path& results) const {
  // GoogleTest writes <program>.json into the folder (the trailing slash says folder).
  std::vector<std::pair<std::string, std::string>> env{{"GTEST_OUTPUT", "json:" + results.string() + "/"},
                                                       {"MAXCODE_TEST_RESULTS", results.string()}};
  if (!test_tools_dir_.empty()) {
    // The child's own PATH, extended: passed through, not configuration read here.
    const char* path = std::getenv("PATH");
    env.push_back({"PATH", test_tools_dir_.string() + ":" + (path && *path ? path : "/usr/local/bin:/usr/bin:/bin")});
  }
  return env;
}

bool Evaluator::judge_tests(Evaluation& e, const fs::path& ws) {
  const bool original = ws == baseline_workspace_;
  TestResults got;
  try {
    got = read_test_results(test_results_dir(ws));
  } catch (const std::exception& error) {
    if (original) throw SetupError(std::string("the original's test reports cannot be read: ") + error.what());
    e.verdict = Verdict::kTestFailed;
    e.reason = std::string("tests failed: their report cannot be read: ") + error.what();
    return false;
  }
  e.tests = to_json(got);
  if (original) {
    original_tests_ = got;
    e.tests["judged_by"] = got.reported() ? "reports" : "exit code";
    progress_.note("original's tests: " + got.summary());
    if (std::string failing = original_test_failures(got); !failing.empty())
      warnings_.push_back("the test command exits 0 although its reports say " + failing +
                          ": candidates are not held to those");
    return true;
  }
  if (!original_tests_.reported() && !got.reported()) {
    e.tests["judged_by"] = "exit code";
    return true;
  }
  e.tests["judged_by"] = "reports";
  e.tests["original_ran"] = original_tests_.ran();
  if (std::string problem = judge_test_results(original_tests_, got); !problem.empty()) {
    e.verdict = Verdict::kTestFailed;
    e.reason = "tests failed (the test command exited 0): " + problem;
    return false;
  }
  return true;
}

void Evaluator::prepare_test_tools() {
  // ctest writes JUnit only when asked: a wrapper first on the test step's PATH asks.
  // PATH read here: the ctest the test step's child would find, as execvp finds it.
  const char* path = std::getenv("PATH");
  std::string real;
  for (std::string rest = path ? path : ""; !rest.empty();) {
    const std::size_t colon = rest.find(':');
    const std::string entry = rest.substr(0, colon);
    rest = colon == std::string::npos ? "" : rest.substr(colon + 1);
    if (entry.empty() || entry[0] != '/') continue;
    const fs::path candidate = fs::path(entry) / "ctest";
    if (::access(candidate.c_str(), X_OK) == 0) {
      real = candidate.string();
      break;
    }
  }
  if (real.empty()) return;  // no ctest: a test command cannot run it either
  Command version;
  version.shell = shell_quote(real) + " --version";
  version.timeout_s = 30;
  const Outcome o = run(version);
  if (!o.ok() || !ctest_writes_junit(o.out)) {
    warnings_.push_back("ctest at " + real + " cannot write a JUnit report (3.21 or later can): tests that ctest "
                        "runs are judged by their GoogleTest reports or the exit code alone");
    return;
  }
  const fs::path dir = options_.work_dir / ("test-tools-" + shim_tag_);
  fs::create_directories(dir);
  write_text_exact(dir / "ctest", ctest_wrapper_script(real));
  fs::permissions(dir / "ctest", fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                     fs::perms::others_read | fs::perms::others_exec);
  test_tools_dir_ = dir;
}

bool Evaluator::compare_with_reference(Evaluation& e, const fs::path& ws,
                                       const std::map<std::string, std::string>& overrides) {
  const auto& seeds = config_.acceptance.seeds;
  for (std::size_t b = 0; b < config_.benchmarks.size(); ++b) {
    const BenchmarkConfig& bench = config_.benchmarks[b];
    OutputError printed;
    printed.output = bench.name + " (printed)";
    printed.type = "text";
    // A benchmark whose output is not compared still has to run cleanly once.
    const std::size_t runs = bench.compare_output ? seeds.size() : 1;
    for (std::size_t s = 0; s < runs; ++s) {
      const std::string label = "check " + bench.name + " seed=" + std::to_string(seeds[s]);
      std::vector<std::pair<std::string, std::string>> env{{"MAXCODE_SEED", std::to_string(seeds[s])}};
      const bool kernels = bench.metric == "kernels";
      GpuRun gpu;
      std::optional<TimingLock> beside_sessions;  // never inside another candidate's timed rounds
      if (kernels) {
        gpu = gpu_run(ws, &devices_.front());
        env.insert(env.end(), gpu.env.begin(), gpu.env.end());
        beside_sessions.emplace(timing_lock_dir(options_.env.lock_dir), devices_.front().lock_key(),
                                TimingLock::Mode::kShared);
      }
      auto r = run_step(e, label, bench.command, ws, bench.timeout_s, overrides, env, {}, gpu.readable_paths);
      beside_sessions.reset();
      if (!r.tampered.empty()) {
        e.verdict = Verdict::kRejected;
        e.reason = r.tampering("the benchmark '" + bench.name + "' (MAXCODE_SEED=" + std::to_string(seeds[s]) + ")");
        return false;
      }
      if (!r.outcome.ok()) {
        e.verdict = failure_verdict(r.outcome, Verdict::kCrashed);
        e.reason = "benchmark '" + bench.name + "' (MAXCODE_SEED=" + std::to_string(seeds[s]) +
                   ") " + r.outcome.describe();
        return false;
      }
      if (bench.compare_output) {
        Comparison c = compare_outputs(reference_[b][s], r.outcome.out, output_tolerance(b));
        if (!c.equal) {
          e.verdict = Verdict::kIncorrect;
          e.reason = "output of '" + bench.name + "' differs from the original's (MAXCODE_SEED=" +
                     std::to_string(seeds[s]) + ")" + near_miss(c, b);
          e.mismatch = c.summary();
          return false;
        }
        printed.values += c.expected_tokens;
        printed.max_relative = std::max(printed.max_relative, c.max_relative_error);
      }
      if (kernels) {
        // Where the work went, before any time is spent timing it.
        std::string problem;
        try {
          RunKernels run = gpu_records(gpu);
          problem = check_gpu_run(b, run, selections_[b].seconds(run), false);
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
    if (bench.compare_output) e.precision.push_back(printed);
  }
  return true;
}

// A rejection by a hair says which field to change: "relative error 8e-06 against
// rtol 1e-06" with every difference a small floating-point one.
std::string Evaluator::near_miss(const Comparison& c, std::size_t b) const {
  if (c.equal || c.expected_tokens != c.actual_tokens || c.max_relative_error <= 0 || c.max_relative_error > 1e-3)
    return "";
  for (const Mismatch& m : c.first)
    if (m.why.rfind("relative error", 0) != 0 && m.why.rfind("absolute error", 0) != 0) return "";
  const BenchmarkConfig& bench = config_.benchmarks[b];
  return format_numbers(": relative error up to %.2g against rtol %g", c.max_relative_error, bench.rtol) +
         "; if a difference this size is acceptable, raise benchmarks[" + std::to_string(b) + "].rtol (or atol) in " +
         config_.file.string();
}

// A benchmark that prints its own timings ("time: 1.23 ms") differs from run to run in
// those numbers only. They are found by running the original again with the same seed
// (twice, so that a field that happened to agree once is still found), left out of every
// comparison of this benchmark's output, and named in a warning. Anything else that
// differs, or every number differing, leaves no reference to check candidates against.
void Evaluator::mask_varying_fields(std::size_t b, const std::string& again, Evaluation& e) {
  const BenchmarkConfig& bench = config_.benchmarks[b];
  const Tolerance plain{bench.rtol, bench.atol};
  const std::string& first = reference_[b][0];
  const Comparison c = compare_outputs(first, again, plain);
  if (c.equal) return;
  auto refuse = [&](const std::string& why) {
    throw SetupError("benchmark '" + bench.name + "' prints different output for the same MAXCODE_SEED on the "
                     "original code, so candidates cannot be checked against it: " + why);
  };
  auto fields = find_varying_fields(first, again, plain);
  if (!fields) refuse(c.summary());
  const std::string seed = std::to_string(config_.acceptance.seeds[0]);
  auto third = run_step(e, "reference " + bench.name + " (third run)", bench.command, baseline_workspace_,
                        bench.timeout_s, {}, {{"MAXCODE_SEED", seed}});
  if (!third.tampered.empty() || !third.outcome.ok())
    throw SetupError("benchmark '" + bench.name + "' fails on the original code (MAXCODE_SEED=" + seed +
                     ", third run): " + (third.tampered.empty() ? third.outcome.describe() : third.tampering("it")));
  auto more = find_varying_fields(first, third.outcome.out, plain);
  if (!more) refuse(compare_outputs(first, third.outcome.out, plain).summary());
  for (VaryingField& f : *more)
    if (std::find(fields->begin(), fields->end(), f) == fields->end()) fields->push_back(std::move(f));
  std::string names;
  for (const VaryingField& f : *fields) names += (names.empty() ? "" : ", ") + describe(f);
  varying_[b] = std::move(*fields);
  if (compared_numbers(first, output_tolerance(b)) == 0)
    refuse("every number it prints varies between runs (" + names + ")");
  warnings_.push_back("benchmark '" + bench.name + "' prints " + std::to_string(varying_[b].size()) +
                      " number(s) that differ between runs of the original with one seed, such as its own "
                      "timings; they are not compared, only required to be numbers: " + names);
}

void Evaluator::prepare_baseline() {
  baseline_workspace_ = new_workspace_dir("baseline");
  create_workspace(source_, baseline_workspace_);
  Evaluation e;
  e.candidate_id = "baseline";
  prepare_test_tools();
  progress_.status("baseline: building and testing the original");
  if (!build_and_test(e, baseline_workspace_, {})) {
    std::string detail = !e.compiler_output.empty() ? e.compiler_output : e.test_output;
    if (detail.empty() && !e.steps.empty()) detail = e.steps.back().output_tail;
    throw SetupError("the original code does not pass its own checks: " + e.reason +
                     (detail.empty() ? "" : "\n" + detail));
  }
  const auto& seeds = config_.acceptance.seeds;
  reference_.assign(config_.benchmarks.size(), {});
  varying_.assign(config_.benchmarks.size(), {});
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
      const bool framework = bench.metric == "google-benchmark";
      fs::path framework_file;
      if (framework) {
        framework_file = google_benchmark_file(baseline_workspace_, shim_tag_, ++gpu_run_counter_);
        make_dirs_beneath(baseline_workspace_, framework_file.parent_path());
        auto extra = google_benchmark_env(framework_file, bench.filter);
        env.insert(env.end(), extra.begin(), extra.end());
      }
      auto r = run_step(e, "reference " + bench.name, bench.command, baseline_workspace_,
                        bench.timeout_s, {}, env, {}, gpu.readable_paths);
      if (!r.outcome.ok() || !r.tampered.empty())
        throw SetupError("benchmark '" + bench.name + "' fails on the original code (MAXCODE_SEED=" +
                         std::to_string(seeds[s]) + "): " +
                         (r.tampered.empty() ? r.outcome.describe() : r.tampering("it")) +
                         "\n" + r.outcome.tail(2000));
      reference_[b].push_back(r.outcome.out);
      if (framework && s == 0) {
        // Timing reads these figures: a command that writes none cannot be timed.
        try {
          read_google_benchmark(baseline_workspace_, framework_file);
        } catch (const std::exception& error) {
          throw SetupError("benchmark '" + bench.name + "' has \"metric\": \"google-benchmark\", but: " + error.what());
        }
      }
      if (kernels && s == 0) {
        RunKernels run;
        try {
          run = gpu_records(gpu);
        } catch (const std::exception& error) {
          throw SetupError(std::string("benchmark '") + bench.name + "': " + error.what());
        }
        if (run.processes() == 0)
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
    if (!again.tampered.empty())
      throw SetupError("benchmark '" + bench.name + "' fails on the original code: " + again.tampering("its second run"));
    if (!again.outcome.ok())
      throw SetupError("benchmark '" + bench.name + "' fails on the original code (MAXCODE_SEED=" +
                       std::to_string(seeds[0]) + ", second run): " + again.outcome.describe());
    mask_varying_fields(b, again.outcome.out, e);
    bool all_same = true;
    const Tolerance exact{0, 0, &varying_[b]};
    for (const auto& out : reference_[b]) all_same = all_same && compare_outputs(reference_[b][0], out, exact).equal;
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
  prepare_call_check();
  if (gpu_) prepare_gpu();
  if (isolation() == Isolation::kNone && config_.workspace.isolate)
    warnings_.push_back("no sandbox works here (bubblewrap, namespaces, unshare): candidate code runs with "
                        "the network reachable and the file system writable");
  if (isolation() == Isolation::kUnshare)
    warnings_.push_back("only unshare works here: candidate code runs without network, but with the "
                        "file system writable");
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
               compare_with_reference(e, c.workspace, candidate.files) &&
               call_check(e, c);
  } catch (const std::exception& error) {
    e.verdict = Verdict::kRejected;
    e.reason = std::string("could not evaluate: ") + error.what();
    c.passed = false;
  }
  if (!c.passed) release(c);
  finish();
  return c;
}

}  // namespace maxcode
