#include "runner/evaluate/build_and_test.h"

#include <unistd.h>

#include <cstdlib>

#include "runner/evaluate/evaluator_steps.h"
#include "runner/evaluate/gpu/ptxas_report.h"
#include "runner/util/files.h"
#include "runner/util/names.h"

namespace maxcode {

namespace fs = std::filesystem;
using namespace evaluator_steps;

namespace {

// A step that went behind the harness's back is a rejection, whatever its exit code.
bool tampered(Evaluation& e, const StepResult& r, const std::string& during) {
  if (r.tampered.empty()) return false;
  e.verdict = Verdict::kRejected;
  e.reason = r.tampering(during);
  return true;
}

}  // namespace

bool BuildAndTest::check_original(Evaluation& evaluation) {
  return build_and_test(evaluation, ctx_.baseline_workspace, nullptr);
}

bool BuildAndTest::check(Checked& c) { return build_and_test(c.evaluation, c.workspace, &c.materialized.files); }

bool BuildAndTest::build_step(Evaluation& e, const std::string& name, const std::string& command, const fs::path& ws,
                              const FileOverrides* overrides, Outcome* outcome) {
  auto r = steps_.run(e, Step(name, command, ws, ctx_.config.build.timeout_s).on(overrides));
  if (tampered(e, r, name == "build" ? "the build" : "the " + name + " step")) return false;
  if (!r.outcome.ok()) {
    e.verdict = failure_verdict(r.outcome, Verdict::kCompileError);
    e.reason = name + " failed: " + r.outcome.describe();
    e.compiler_output = r.outcome.tail(kFeedbackBytes);
    return false;
  }
  if (outcome) *outcome = std::move(r.outcome);
  return true;
}

bool BuildAndTest::build(Evaluation& e, const fs::path& ws, const FileOverrides* overrides) {
  const BuildConfig& build = ctx_.config.build;
  if (!build.configure.empty() && !build_step(e, "configure", build.configure, ws, overrides, nullptr)) return false;
  Outcome outcome;
  if (!build_step(e, "build", build.command, ws, overrides, &outcome)) return false;
  if (ctx_.gpu && ctx_.config.gpu.ptxas_report) keep_ptxas_report(e, outcome);
  return true;
}

void BuildAndTest::keep_ptxas_report(Evaluation& e, const Outcome& build) const {
  auto kernels = parse_ptxas_report(build.out + "\n" + build.err);
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

bool BuildAndTest::build_and_test(Evaluation& e, const fs::path& ws, const FileOverrides* overrides) {
  if (!build(e, ws, overrides)) return false;
  // The frameworks report into a fresh folder of the workspace (test_results.h).
  const fs::path results = results_dir(ws);
  fs::remove_all(results);
  fs::create_directories(results);
  EnvVars test_vars{{"MAXCODE_SEED", std::to_string(ctx_.config.acceptance.seeds.front())}};
  for (auto& v : test_env(results)) test_vars.push_back(std::move(v));
  std::vector<std::string> tools;
  if (!tools_dir_.empty()) tools.push_back(tools_dir_.string());
  const TestConfig& tests = ctx_.config.test;
  auto test =
      steps_.run(e, Step("test", tests.command, ws, tests.timeout_s).on(overrides).with_env(test_vars).showing(tools));
  if (tampered(e, test, "the tests")) return false;
  if (!test.outcome.ok()) {
    e.verdict = failure_verdict(test.outcome, Verdict::kTestFailed);
    e.reason = "tests failed: " + test.outcome.describe();
    e.test_output = test.outcome.tail(kFeedbackBytes);
    return false;
  }
  // An exit code of 0 is not the last word where a framework says more.
  if (!judge(e, ws)) {
    e.test_output = test.outcome.tail(kFeedbackBytes);
    return false;
  }
  return true;
}

fs::path BuildAndTest::results_dir(const fs::path& workspace) const {
  return workspace / (".maxcode-tests-" + ctx_.tag);
}

EnvVars BuildAndTest::test_env(const fs::path& results) const {
  // GoogleTest writes <program>.json into the folder (the trailing slash says folder).
  EnvVars env{{"GTEST_OUTPUT", "json:" + results.string() + "/"}, {"MAXCODE_TEST_RESULTS", results.string()}};
  if (!tools_dir_.empty()) {
    // The child's own PATH, extended: passed through, not configuration read here.
    const char* path = std::getenv("PATH");
    env.push_back({"PATH", tools_dir_.string() + ":" + (path && *path ? path : "/usr/local/bin:/usr/bin:/bin")});
  }
  return env;
}

bool BuildAndTest::judge(Evaluation& e, const fs::path& ws) {
  const bool original = ws == ctx_.baseline_workspace;
  TestResults got;
  try {
    got = read_test_results(results_dir(ws));
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
    ctx_.progress.note("original's tests: " + got.summary());
    if (std::string failing = original_test_failures(got); !failing.empty())
      ctx_.warn("the test command exits 0 although its reports say " + failing + ": candidates are not held to those");
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

void BuildAndTest::prepare_tools() {
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
  const Outcome o = maxcode::run(version);
  if (!o.ok() || !ctest_writes_junit(o.out)) {
    ctx_.warn("ctest at " + real +
              " cannot write a JUnit report (3.21 or later can): tests that ctest "
              "runs are judged by their GoogleTest reports or the exit code alone");
    return;
  }
  const fs::path dir = ctx_.options.work_dir / ("test-tools-" + ctx_.tag);
  fs::create_directories(dir);
  write_text_exact(dir / "ctest", ctest_wrapper_script(real));
  fs::permissions(dir / "ctest", fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                     fs::perms::others_read | fs::perms::others_exec);
  tools_dir_ = dir;
}

}  // namespace maxcode
