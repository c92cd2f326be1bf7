#include "runner/evaluate/output_check.h"

#include <algorithm>
#include <optional>

#include "runner/evaluate/evaluator_steps.h"
#include "runner/instrument/google_benchmark.h"
#include "runner/util/beneath.h"
#include "runner/util/format.h"

namespace maxcode {

namespace fs = std::filesystem;
using namespace evaluator_steps;

Tolerance OutputCheck::tolerance(std::size_t b) const {
  const BenchmarkConfig& bench = ctx_.config.benchmarks[b];
  return {bench.rtol, bench.atol, b < varying_.size() ? &varying_[b] : nullptr};
}

void OutputCheck::record_original(Evaluation& e) {
  const std::size_t n = ctx_.config.benchmarks.size();
  reference_.assign(n, {});
  varying_.assign(n, {});  // filled by check_reproduced: the config's fields and those found
  for (std::size_t b = 0; b < n; ++b) {
    for (std::size_t s = 0; s < ctx_.config.acceptance.seeds.size(); ++s) record_seed(e, b, s);
    if (ctx_.config.benchmarks[b].compare_output) check_reproduced(e, b);
  }
}

void OutputCheck::record_seed(Evaluation& e, std::size_t b, std::size_t s) {
  const BenchmarkConfig& bench = ctx_.config.benchmarks[b];
  const fs::path& ws = ctx_.baseline_workspace;
  const std::string seed = std::to_string(ctx_.config.acceptance.seeds[s]);
  ctx_.progress.status("baseline: reference output of '" + bench.name + "' for seed " + seed);
  EnvVars env{{"MAXCODE_SEED", seed}};
  const bool kernels = bench.metric == "kernels";
  GpuRun gpu;
  if (kernels) {
    gpu = gpu_.start(ws, gpu_.first_device());
    env.insert(env.end(), gpu.env.begin(), gpu.env.end());
  }
  const bool framework = bench.metric == "google-benchmark";
  fs::path framework_file;
  if (framework) {
    framework_file = google_benchmark_file(ws, ctx_.tag, ctx_.next_run());
    make_dirs_beneath(ws, framework_file.parent_path());
    auto extra = google_benchmark_env(framework_file, bench.filter);
    env.insert(env.end(), extra.begin(), extra.end());
  }
  auto r = steps_.run(
      e, Step("reference " + bench.name, bench.command, ws, bench.timeout_s).with_env(env).showing(gpu.readable_paths));
  if (!r.outcome.ok() || !r.tampered.empty())
    throw SetupError("benchmark '" + bench.name + "' fails on the original code (MAXCODE_SEED=" + seed + "): " +
                     (r.tampered.empty() ? r.outcome.describe() : r.tampering("it")) + "\n" + r.outcome.tail(2000));
  reference_[b].push_back(r.outcome.out);
  if (s != 0) return;
  if (framework) {
    // Timing reads these figures: a command that writes none cannot be timed.
    try {
      read_google_benchmark(ws, framework_file);
    } catch (const std::exception& error) {
      throw SetupError("benchmark '" + bench.name + "' has \"metric\": \"google-benchmark\", but: " + error.what());
    }
  }
  if (kernels) {
    RunKernels run;
    try {
      run = gpu_.records(gpu);
    } catch (const std::exception& error) {
      throw SetupError(std::string("benchmark '") + bench.name + "': " + error.what());
    }
    gpu_.keep_original(b, std::move(run));
  }
}

// The original's seed-0 run once more (`label`: "second run", "third run"): its output.
std::string OutputCheck::run_again(Evaluation& e, std::size_t b, const std::string& label) {
  const BenchmarkConfig& bench = ctx_.config.benchmarks[b];
  const std::string seed = std::to_string(ctx_.config.acceptance.seeds[0]);
  auto again = steps_.run(
      e, Step("reference " + bench.name + " (" + label + ")", bench.command, ctx_.baseline_workspace, bench.timeout_s)
             .with_env(EnvVars{{"MAXCODE_SEED", seed}}));
  if (!again.tampered.empty())
    throw SetupError("benchmark '" + bench.name + "' fails on the original code: " + again.tampering("its " + label));
  if (!again.outcome.ok())
    throw SetupError("benchmark '" + bench.name + "' fails on the original code (MAXCODE_SEED=" + seed + ", " + label +
                     "): " + again.outcome.describe());
  return again.outcome.out;
}

void OutputCheck::check_reproduced(Evaluation& e, std::size_t b) {
  const BenchmarkConfig& bench = ctx_.config.benchmarks[b];
  mask_varying_fields(b, {run_again(e, b, "second run"), run_again(e, b, "third run")});
  const std::vector<std::string>& outputs = reference_[b];
  bool all_same = true;
  const Tolerance exact{0, 0, &varying_[b]};
  for (const auto& out : outputs) all_same = all_same && compare_outputs(outputs[0], out, exact).equal;
  if (all_same)
    ctx_.warn("benchmark '" + bench.name +
              "' prints the same output for every MAXCODE_SEED: it seems to ignore "
              "the seed, so every candidate is checked on one input only");
  if (all_numbers_zero(outputs[0]))
    ctx_.warn("benchmark '" + bench.name +
              "' prints no non-zero number: comparing its output proves little about "
              "correctness");
  if (outputs[0].empty())
    ctx_.warn("benchmark '" + bench.name + "' prints nothing: its output cannot show a wrong result");
}

// A benchmark that prints its own timings ("time: 1.23 ms") differs from run to run in
// those numbers only. They are found by running the original twice more with the same
// seed, always: a timing that agreed once (within rtol, or printed coarsely) agrees
// less often twice, and a field missed here rejects every faster candidate. The fields
// the config names (`varying`, written by `maxcode init`) are left out whether or not
// they differed this time. Fields are left out of every comparison of this benchmark's
// output and named in a warning. Anything else that differs, or every number
// differing, leaves no reference to check candidates against.
void OutputCheck::mask_varying_fields(std::size_t b, const std::vector<std::string>& again) {
  const BenchmarkConfig& bench = ctx_.config.benchmarks[b];
  const Tolerance plain{bench.rtol, bench.atol};
  const std::string& first = reference_[b][0];
  auto refuse = [&](const std::string& why) {
    throw SetupError("benchmark '" + bench.name +
                     "' prints different output for the same MAXCODE_SEED on the "
                     "original code, so candidates cannot be checked against it: " +
                     why);
  };
  std::vector<VaryingField> fields = bench.varying;
  for (const std::string& other : again) {
    const Comparison c = compare_outputs(first, other, {bench.rtol, bench.atol, &bench.varying});
    if (c.equal) continue;
    auto found = find_varying_fields(first, other, plain);
    if (!found) refuse(c.summary());
    for (VaryingField& f : *found)
      if (std::find(fields.begin(), fields.end(), f) == fields.end()) fields.push_back(std::move(f));
  }
  varying_[b] = std::move(fields);
  if (varying_[b].empty()) return;
  std::string names;
  for (const VaryingField& f : varying_[b]) names += (names.empty() ? "" : ", ") + describe(f);
  if (compared_numbers(first, tolerance(b)) == 0) refuse("every number it prints varies between runs (" + names + ")");
  ctx_.warn("benchmark '" + bench.name + "' prints " + std::to_string(varying_[b].size()) +
            " number(s) that differ between runs of the original with one seed, such as its own "
            "timings; they are not compared, only required to be numbers: " +
            names);
}

// A rejection by a hair says which field to change: "relative error 8e-06 against
// rtol 1e-06" with every difference a small floating-point one.
std::string OutputCheck::near_miss(const Comparison& c, std::size_t b) const {
  if (c.equal || c.expected_tokens != c.actual_tokens || c.max_relative_error <= 0 || c.max_relative_error > 1e-3)
    return "";
  for (const Mismatch& m : c.first)
    if (m.why.rfind("relative error", 0) != 0 && m.why.rfind("absolute error", 0) != 0) return "";
  const BenchmarkConfig& bench = ctx_.config.benchmarks[b];
  return format_numbers(": relative error up to %.2g against rtol %g", c.max_relative_error, bench.rtol) +
         "; if a difference this size is acceptable, raise benchmarks[" + std::to_string(b) + "].rtol (or atol) in " +
         ctx_.config.file.string();
}

bool OutputCheck::check(Checked& c) {
  for (std::size_t b = 0; b < ctx_.config.benchmarks.size(); ++b) {
    const BenchmarkConfig& bench = ctx_.config.benchmarks[b];
    OutputError printed;
    printed.output = bench.name + " (printed)";
    printed.type = "text";
    // A benchmark whose output is not compared still has to run cleanly once.
    const std::size_t runs = bench.compare_output ? ctx_.config.acceptance.seeds.size() : 1;
    for (std::size_t s = 0; s < runs; ++s)
      if (!check_seed(c, b, s, printed)) return false;
    if (bench.compare_output) c.evaluation.precision.push_back(printed);
  }
  return true;
}

bool OutputCheck::check_seed(Checked& c, std::size_t b, std::size_t s, OutputError& printed) {
  Evaluation& e = c.evaluation;
  const BenchmarkConfig& bench = ctx_.config.benchmarks[b];
  const std::string seed = std::to_string(ctx_.config.acceptance.seeds[s]);
  EnvVars env{{"MAXCODE_SEED", seed}};
  const bool kernels = bench.metric == "kernels";
  GpuRun gpu;
  std::optional<TimingLock> beside_sessions;  // never inside another candidate's timed rounds
  if (kernels) {
    gpu = gpu_.start(c.workspace, gpu_.first_device());
    env.insert(env.end(), gpu.env.begin(), gpu.env.end());
    beside_sessions.emplace(timing_lock_dir(ctx_.options.env.lock_dir), gpu_.first_device()->lock_key(),
                            TimingLock::Mode::kShared);
  }
  auto r = steps_.run(e, Step("check " + bench.name + " seed=" + seed, bench.command, c.workspace, bench.timeout_s)
                             .on(c.materialized.files)
                             .with_env(env)
                             .showing(gpu.readable_paths));
  beside_sessions.reset();
  const std::string run_name = "benchmark '" + bench.name + "' (MAXCODE_SEED=" + seed + ")";
  if (!r.tampered.empty()) {
    e.verdict = Verdict::kRejected;
    e.reason = r.tampering("the " + run_name);
    return false;
  }
  if (!r.outcome.ok()) {
    e.verdict = failure_verdict(r.outcome, Verdict::kCrashed);
    e.reason = run_name + " " + r.outcome.describe();
    return false;
  }
  if (bench.compare_output) {
    Comparison cmp = compare_outputs(reference_[b][s], r.outcome.out, tolerance(b));
    if (!cmp.equal) {
      e.verdict = Verdict::kIncorrect;
      e.reason =
          "output of '" + bench.name + "' differs from the original's (MAXCODE_SEED=" + seed + ")" + near_miss(cmp, b);
      e.mismatch = cmp.summary();
      return false;
    }
    printed.values += cmp.expected_tokens;
    printed.max_relative = std::max(printed.max_relative, cmp.max_relative_error);
  }
  if (!kernels) return true;
  // Where the work went, before any time is spent timing it.
  if (const std::string problem = check_kernels(e, b, s, gpu); !problem.empty()) {
    e.verdict = Verdict::kRejected;
    e.reason = "benchmark '" + bench.name + "': " + problem;
    return false;
  }
  return true;
}

std::string OutputCheck::check_kernels(Evaluation& e, std::size_t b, std::size_t s, GpuRun& gpu) {
  try {
    RunKernels run = gpu_.records(gpu);
    const std::string problem = gpu_.check(b, run, gpu_.selection(b).seconds(run), false);
    if (s == 0) e.gpu["kernels"] = to_json(run, gpu_.selection(b));
    return problem;
  } catch (const std::exception& error) {
    return error.what();
  }
}

}  // namespace maxcode
