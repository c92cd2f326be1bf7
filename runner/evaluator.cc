#include "runner/evaluator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "runner/files.h"
#include "runner/normalize.h"
#include "runner/output_compare.h"
#include "runner/patch.h"
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
  return env;
}

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
      auto r = run_step(e, label, bench.command, ws, bench.timeout_s, overrides,
                        {{"MAXCODE_SEED", std::to_string(seeds[s])}});
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
      if (!bench.compare_output) continue;
      Comparison c = compare_outputs(reference_[b][s], r.outcome.out, {bench.rtol, bench.atol});
      if (!c.equal) {
        e.verdict = Verdict::kIncorrect;
        e.reason = "output of '" + bench.name + "' differs from the original's (MAXCODE_SEED=" +
                   std::to_string(seeds[s]) + ")";
        e.mismatch = c.summary();
        return false;
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
  for (std::size_t b = 0; b < config_.benchmarks.size(); ++b) {
    const BenchmarkConfig& bench = config_.benchmarks[b];
    for (std::size_t s = 0; s < seeds.size(); ++s) {
      progress_.status("baseline: reference output of '" + bench.name + "' for seed " +
                       std::to_string(seeds[s]));
      auto r = run_step(e, "reference " + bench.name, bench.command, baseline_workspace_,
                        bench.timeout_s, {}, {{"MAXCODE_SEED", std::to_string(seeds[s])}});
      if (!r.outcome.ok() || !r.tampered.empty())
        throw SetupError("benchmark '" + bench.name + "' fails on the original code (MAXCODE_SEED=" +
                         std::to_string(seeds[s]) + "): " +
                         (r.tampered.empty() ? r.outcome.describe() : "it changed " + r.tampered) +
                         "\n" + r.outcome.tail(2000));
      reference_[b].push_back(r.outcome.out);
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

double Evaluator::run_suite(const fs::path& ws, const std::map<std::string, std::string>& overrides,
                            std::string& failure, Verdict& failure_verdict_out) {
  double total = 0;
  const std::uint64_t seed = config_.acceptance.seeds.front();
  for (std::size_t b = 0; b < config_.benchmarks.size(); ++b) {
    const BenchmarkConfig& bench = config_.benchmarks[b];
    Evaluation scratch;
    auto r = run_step(scratch, "timing " + bench.name, bench.command, ws, bench.timeout_s,
                      overrides, {{"MAXCODE_SEED", std::to_string(seed)}}, /*time_inside=*/true);
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
    // The command's own time, measured inside the sandbox; the outer time (sandbox
    // start-up included) only if the inner one is missing.
    total += r.outcome.inner_wall_s >= 0 ? r.outcome.inner_wall_s : r.outcome.wall_s;
  }
  session_child_s_ += total;
  return total;
}

Timing Evaluator::ab_session(const std::string& label, const fs::path& candidate_ws,
                             const std::map<std::string, std::string>& overrides,
                             std::string& failure, Verdict& verdict) {
  const AcceptanceConfig& acc = config_.acceptance;
  Timing t;
  session_child_s_ = 0;
  t.noise_floor = noise_floor_;
  t.min_speedup = acc.min_speedup;
  const auto start = std::chrono::steady_clock::now();
  std::bernoulli_distribution coin(0.5);
  for (int round = -acc.warmup_rounds;; ++round) {
    // Random order within each round: a drift (thermal, caches, other load) cannot
    // favour whichever side always runs second.
    const bool baseline_first = coin(rng_);
    double times[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
      const bool baseline_side = (k == 0) == baseline_first;
      std::string side_failure;
      Verdict side_verdict = Verdict::kCrashed;
      double s = baseline_side ? run_suite(baseline_workspace_, {}, side_failure, side_verdict)
                               : run_suite(candidate_ws, overrides, side_failure, side_verdict);
      if (s < 0) {
        if (baseline_side)
          throw SetupError("the original failed during timing: " + side_failure);
        failure = side_failure;
        verdict = side_verdict;
        return t;
      }
      times[baseline_side ? 0 : 1] = s;
    }
    if (round < 0) continue;  // warm-up
    t.baseline_s.push_back(times[0]);
    t.candidate_s.push_back(times[1]);
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
  t.baseline_median_s = median(t.baseline_s);
  t.candidate_median_s = median(t.candidate_s);
  t.significant = significant(t.speedup, acc.min_speedup, noise_floor_);
  return t;
}

Timing Evaluator::measure_noise() {
  std::string failure;
  Verdict verdict = Verdict::kCrashed;
  noise_floor_ = 1.0;
  Timing aa = ab_session("A/A noise", baseline_workspace_, {}, failure, verdict);
  if (!failure.empty()) throw SetupError("the original failed during the A/A run: " + failure);
  noise_floor_ = maxcode::noise_floor(aa.speedup);
  aa.noise_floor = noise_floor_;
  return aa;
}

void Evaluator::time(Checked& c) {
  Evaluation& e = c.evaluation;
  if (!c.passed) return;
  const auto start = std::chrono::steady_clock::now();
  std::string failure;
  Verdict verdict = Verdict::kCrashed;
  Timing t = ab_session(e.candidate_id, c.workspace, c.materialized.files, failure, verdict);
  e.wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  e.child_s += session_child_s_;
  if (!failure.empty()) {
    e.verdict = verdict;
    e.reason = failure;
    c.passed = false;
    return;
  }
  e.timing = t;
  const RatioInterval& s = t.speedup;
  const std::string figure = format("%.3fx (95%% CI %.3f-%.3f", s.median, s.low, s.high) + ", " +
                             std::to_string(s.rounds) + " rounds)";
  if (t.significant) {
    e.verdict = Verdict::kFaster;
    e.reason = figure;
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
  Timing t = ab_session(c.evaluation.candidate_id + " (confirm)", c.workspace,
                        c.materialized.files, failure, verdict);
  if (!failure.empty()) {
    t.significant = false;
    t.stop_reason = "failed: " + failure;
  }
  return t;
}

void Evaluator::release(Checked& c) noexcept {
  if (!c.workspace.empty() && !options_.keep_workspaces) remove_workspace(c.workspace);
  c.workspace.clear();
}

}  // namespace maxcode
