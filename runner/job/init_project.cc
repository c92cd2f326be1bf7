#include "runner/job/init_project.h"

#include <algorithm>

#include "runner/core/config.h"
#include "runner/evaluate/evaluator.h"
#include "runner/job/init_tolerance.h"
#include "runner/util/files.h"
#include "runner/util/format.h"
#include "runner/util/git_util.h"
#include "runner/util/run_dir.h"
#include "runner/workspace/unit.h"
#include "runner/workspace/workspace.h"

namespace maxcode {

namespace fs = std::filesystem;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The original's checks, from how far prepare_baseline got: it stops at the first
// failure, and its message says which step that was. `varying`: per benchmark, the
// numbers its output check leaves out (timings it prints).
std::vector<InitCheck> checks_from(const Config& config, const std::string& failure,
                                   const std::vector<std::vector<VaryingField>>& varying) {
  const bool build_failed = contains(failure, "build failed") || contains(failure, "configure failed");
  const bool tests_failed = !build_failed && contains(failure, "tests failed");
  const bool checks_failed = build_failed || tests_failed;
  std::vector<InitCheck> checks;
  checks.push_back({"builds (" + config.build.command + ")", !build_failed, build_failed ? failure : ""});
  if (build_failed) return checks;
  checks.push_back({"tests pass (" + config.test.command + ")", !tests_failed, tests_failed ? failure : ""});
  if (checks_failed) return checks;
  for (std::size_t b = 0; b < config.benchmarks.size(); ++b) {
    const BenchmarkConfig& bench = config.benchmarks[b];
    const bool this_one = contains(failure, "'" + bench.name + "'");
    const std::string seeds = std::to_string(config.acceptance.seeds.size());
    checks.push_back({"benchmark '" + bench.name + "' runs with each of " + seeds + " MAXCODE_SEED values" +
                          (bench.metric == "google-benchmark" ? " and writes its JSON times" : ""),
                      !(this_one && !contains(failure, "different output")), this_one ? failure : ""});
    if (bench.compare_output) {
      const std::size_t left_out = b < varying.size() ? varying[b].size() : 0;
      const std::string apart = left_out == 0 ? ""
                                              : ", apart from " + std::to_string(left_out) +
                                                    (left_out == 1 ? " number that differs" : " numbers that differ") +
                                                    " between runs (its timings: never compared)";
      checks.push_back({"benchmark '" + bench.name + "' prints the same output twice for one seed" + apart,
                        !(this_one && contains(failure, "different output")), ""});
    }
  }
  if (!failure.empty() && std::none_of(checks.begin(), checks.end(), [](const InitCheck& c) { return !c.ok; }))
    checks.push_back({"the original can serve as the reference", false, failure});
  return checks;
}

// A build that fails on a warning the project itself makes an error (-Werror): the
// compiler here is newer than the project's CI and warns more (issue 24: a division
// library under GCC 12). Says which warning, and how to build anyway.
std::string werror_advice(const Config& config, const std::string& failure) {
  const std::size_t at = failure.find("[-Werror");
  if (at == std::string::npos) return "";
  const std::size_t end = failure.find(']', at);
  const std::string flag = failure.substr(at + 1, end == std::string::npos ? 20 : end - at - 1);
  // The warning's name: -Werror=maybe-uninitialized -> -Wno-error=maybe-uninitialized.
  const std::size_t eq = flag.find('=');
  const std::string drop = eq == std::string::npos ? "-Wno-error" : "-Wno-error=" + flag.substr(eq + 1);
  std::string how = "add " + drop + " to the compiler flags";
  if (config.build.configure.find("cmake") != std::string::npos)
    how = "append -DCMAKE_C_FLAGS=" + drop + " -DCMAKE_CXX_FLAGS=" + drop + " to build.configure";
  return "The build fails on a warning that the project's own -Werror makes an error (" + flag +
         "): this compiler warns where the project's did not. To build as the project meant, " + how +
         " (or turn off the project's warnings-as-errors option), then `maxcode init --recheck`.";
}

// The proposed config's "benchmarks" field: its place among the fields, or npos.
std::size_t benchmarks_field(const InitReport& report) {
  const auto& fields = report.proposed.fields;
  auto it = std::find_if(fields.begin(), fields.end(), [](const auto& f) { return f.first == "benchmarks"; });
  return it == fields.end() ? std::string::npos : static_cast<std::size_t>(it - fields.begin());
}

// Writes the chosen tolerances into the proposed config (with why, above the
// benchmarks); what it says is left for the person to confirm. True when it changed.
bool apply_tolerances(InitReport& report, const std::vector<ToleranceChoice>& choices) {
  const std::size_t at = benchmarks_field(report);
  if (at == std::string::npos) return false;
  nlohmann::ordered_json& benchmarks = report.proposed.fields[at].second;
  bool changed = false;
  for (std::size_t b = 0; b < choices.size() && b < benchmarks.size(); ++b) {
    const ToleranceChoice& c = choices[b];
    if (!c.floats) continue;
    benchmarks[b]["rtol"] = c.rtol;
    if (c.atol > 0) benchmarks[b]["atol"] = c.atol;
    report.proposed.comments[at].push_back("Tolerance of " + c.why + ".");
    report.decisions.push_back("benchmarks[" + std::to_string(b) + "] (" + c.why +
                               "): check that a difference this size is one you accept.");
    changed = true;
  }
  return changed;
}

// The numbers the original printed differently with one seed (its timings) go into the
// config as the benchmark's `varying`: a later run whose original happens to print the
// same timing twice still leaves them out, instead of rejecting every faster candidate.
bool apply_varying(InitReport& report, const std::vector<std::vector<VaryingField>>& varying) {
  const std::size_t at = benchmarks_field(report);
  if (at == std::string::npos) return false;
  nlohmann::ordered_json& benchmarks = report.proposed.fields[at].second;
  bool changed = false;
  for (std::size_t b = 0; b < varying.size() && b < benchmarks.size(); ++b) {
    if (varying[b].empty()) continue;
    // The config's own JSON form, as the proposed file's ordered kind.
    benchmarks[b]["varying"] = nlohmann::ordered_json::parse(varying_json(varying[b]).dump());
    changed = true;
  }
  if (changed)
    report.proposed.comments[at].push_back(
        "varying: numbers that differ between runs of the original with one seed (timings it prints): never "
        "compared, only required to be numbers.");
  return changed;
}

// A recheck writes nothing: varying numbers the config does not name are said.
void suggest_varying(InitReport& report, const Config& config, const std::vector<std::vector<VaryingField>>& varying) {
  for (std::size_t b = 0; b < varying.size() && b < config.benchmarks.size(); ++b) {
    std::vector<VaryingField> missing;
    for (const VaryingField& f : varying[b])
      if (std::find(config.benchmarks[b].varying.begin(), config.benchmarks[b].varying.end(), f) ==
          config.benchmarks[b].varying.end())
        missing.push_back(f);
    if (!missing.empty())
      report.decisions.push_back(
          "benchmarks[" + std::to_string(b) +
          "] prints numbers that differ between runs of the original (timings): add \"varying\": " +
          varying_json(varying[b]).dump() + " to keep them out of every comparison.");
  }
}

// A recheck writes nothing: a tolerance the measurement suggests beyond the config's
// own is said, for the person to take or leave.
void suggest_tolerances(InitReport& report, const Config& config, const std::vector<ToleranceChoice>& choices) {
  for (std::size_t b = 0; b < choices.size() && b < config.benchmarks.size(); ++b) {
    const ToleranceChoice& c = choices[b];
    if (!c.floats || config.benchmarks[b].rtol >= c.rtol) continue;
    report.decisions.push_back("benchmarks[" + std::to_string(b) + "] (" + c.why + "): rtol " +
                               format_numbers("%g", c.rtol) + " would accept it; the config has " +
                               format_numbers("%g", config.benchmarks[b].rtol) + ".");
  }
}

// maxcode reads the config from the repository's commits (`maxcode run`, the App):
// a .gitignore that hides it loses it silently.
void check_not_ignored(InitReport& report, const fs::path& repo) {
  std::error_code ec;
  const fs::path relative = fs::relative(fs::absolute(report.config_file, ec), fs::absolute(repo, ec), ec);
  if (ec || relative.empty() || *relative.begin() == "..") return;
  if (!ignored_by_git(repo.string(), relative.generic_string())) return;
  const std::string text = relative.generic_string() + " is ignored by git (a .gitignore rule matches it): `maxcode run`, "
                           "the GitHub App and the Action read it from the repository's commits. Remove the rule, or "
                           "commit it with `git add -f " + relative.generic_string() + "`.";
  report.findings.push_back(text);
  report.decisions.insert(report.decisions.begin(), text);
}

// What the baseline's warnings say of the benchmarks' seeds: a finding each, and one
// check per benchmark whose output is compared (it must vary with MAXCODE_SEED).
void seed_checks(InitReport& report, const Config& config, const std::vector<std::string>& warnings,
                 const std::string& failure) {
  for (const std::string& w : warnings) {
    report.findings.push_back(w);
    if (contains(w, "same output for every MAXCODE_SEED"))
      report.decisions.push_back(
          "A benchmark prints the same output for every MAXCODE_SEED: make its inputs "
          "depend on the seed, or candidates are checked on one input only.");
  }
  for (const BenchmarkConfig& bench : config.benchmarks) {
    if (!bench.compare_output || !failure.empty()) continue;
    bool same = false;
    for (const std::string& w : warnings)
      same = same || (contains(w, "'" + bench.name + "'") && contains(w, "same output for every MAXCODE_SEED"));
    report.checks.push_back({"benchmark '" + bench.name + "' prints different output for different seeds", !same,
                             same ? "it ignores MAXCODE_SEED" : ""});
  }
}

// The original built, tested and run in `work_dir` as maxcode would (no target yet: as
// a reference only), the tolerances probed, and the checks' results. Returns why the
// original failed its checks, or "".
std::string check_original(InitReport& report, const Config& config, const InitOptions& o, const fs::path& work_dir,
                           Progress& progress) {
  const SourceSnapshot source = capture_source(o.repo, work_dir / "source", config.workspace.exclude);
  Evaluator evaluator(config, source, Target{}, Unit{}, {}, {work_dir, {}, false, o.env}, progress);
  std::string failure;
  try {
    evaluator.prepare_baseline();
  } catch (const SetupError& error) {
    failure = error.what();
  }
  seed_checks(report, config, evaluator.warnings(), failure);
  if (failure.empty()) {
    const std::vector<ToleranceChoice> choices =
        probe_tolerances({config, source.root, work_dir, evaluator.isolation(),
                          static_cast<unsigned long long>(config.acceptance.seeds.front())},
                         evaluator.first_seed_outputs(), evaluator.varying_fields(), progress);
    if (o.recheck) {
      suggest_tolerances(report, config, choices);
      suggest_varying(report, config, evaluator.varying_fields());
    } else {
      const bool tolerances = apply_tolerances(report, choices);
      if (apply_varying(report, evaluator.varying_fields()) || tolerances) {
        write_text(report.config_file, render_config(report.proposed));
        load_config(report.config_file);  // still reads back
      }
    }
  }
  std::vector<InitCheck> steps = checks_from(config, failure, evaluator.varying_fields());
  report.checks.insert(report.checks.begin(), steps.begin(), steps.end());
  return failure;
}

}  // namespace

bool InitReport::ok() const {
  for (const InitCheck& c : checks)
    if (!c.ok) return false;
  return true;
}

InitReport init_project(const InitOptions& o, Progress& progress) {
  InitReport report;
  report.config_file = o.config.empty() ? o.repo / ".maxcode.json" : o.config;
  if (o.recheck && !fs::exists(report.config_file))
    throw std::runtime_error(report.config_file.string() + " does not exist: nothing to recheck (run `maxcode init`)");
  if (fs::exists(report.config_file) && !o.force && !o.recheck)
    throw std::runtime_error(report.config_file.string() +
                             " exists already: maxcode init does not overwrite it (--force replaces it; --recheck "
                             "checks it as it is)");
  progress.status("init: reading " + o.repo.string());
  report.scan = scan_project(o.repo);
  report.rechecked = o.recheck;
  if (!o.recheck) {
    report.proposed = propose_config(report.scan);
    // What is written must read back with the same strict reader as every other command;
    // a proposal that does not (a bug of init's) leaves no file behind, nor replaces one.
    const fs::path proposed = report.config_file.string() + ".proposed";
    write_text(proposed, render_config(report.proposed));
    try {
      load_config(proposed);
    } catch (const std::exception& e) {
      std::error_code ec;
      fs::remove(proposed, ec);
      throw std::runtime_error(std::string("maxcode init proposed a config it cannot read back, so it wrote none: ") +
                               e.what());
    }
    fs::rename(proposed, report.config_file);
  }
  const Config config = load_config(report.config_file);
  report.decisions = report.proposed.decisions;
  check_not_ignored(report, o.repo);
  if (!o.check && !o.recheck) return report;

  report.checked = true;
  remove_abandoned_run_dirs(fs::temp_directory_path(), "maxcode-init-");
  const fs::path work_dir = make_run_dir(fs::temp_directory_path(), "maxcode-init-");
  std::string failure;
  try {
    failure = check_original(report, config, o, work_dir, progress);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(work_dir, ignored);
    throw;
  }
  std::error_code ignored;
  fs::remove_all(work_dir, ignored);
  if (const std::string advice = werror_advice(config, failure); !advice.empty())
    report.decisions.insert(report.decisions.begin(), advice);
  if (!failure.empty())
    report.decisions.insert(report.decisions.begin(),
                            "The original fails its checks (above): fix the build, tests or benchmark command in " +
                                report.config_file.string() + ", then check it again with `maxcode init --recheck` "
                                "(which writes nothing; `--force` would replace your fix).");
  return report;
}

}  // namespace maxcode
