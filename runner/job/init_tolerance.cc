#include "runner/job/init_tolerance.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "runner/core/command_limits.h"
#include "runner/util/files.h"
#include "runner/util/format.h"

namespace maxcode {

namespace fs = std::filesystem;

namespace {

constexpr double kFloorRtol = 1e-5;  // floating-point output is never held tighter
constexpr double kCapRtol = 1e-2;    // looser than this compares little: say so instead

// The next power of ten at or above x (x > 0).
double decade_above(double x) { return std::pow(10.0, std::ceil(std::log10(x) - 1e-9)); }

}  // namespace

ToleranceChoice choose_tolerance(const std::string& benchmark, const std::string& reference, const std::string* fast,
                                 const std::vector<VaryingField>& varying) {
  ToleranceChoice c;
  c.benchmark = benchmark;
  c.floats = prints_floats(reference);
  if (!c.floats) return c;  // integers and text are compared exactly whatever the tolerance
  c.rtol = kFloorRtol;
  if (!fast) {
    c.why = "'" + benchmark + "' prints floating-point numbers; the fast-math build could not be run, so rtol is " +
            format_numbers("%g", c.rtol) + ", the floor for floating-point output";
    return c;
  }
  c.measured = true;
  const Comparison exact = compare_outputs(reference, *fast, {0, 0, &varying});
  c.max_relative = exact.max_relative_error;
  if (exact.expected_tokens != exact.actual_tokens) {
    c.why = "'" + benchmark + "' prints floating-point numbers; its fast-math build printed a different number of "
            "values, so rtol is the floor for floating-point output, " + format_numbers("%g", c.rtol);
    c.measured = false;
    return c;
  }
  if (c.max_relative > 0) c.rtol = std::clamp(decade_above(10 * c.max_relative), kFloorRtol, kCapRtol);
  // Numbers near zero move by more than any relative bound: the smallest absolute term
  // that lets the fast-math output pass, times ten.
  c.atol = 1e-2;
  for (double atol = 0; atol <= 1e-3; atol = atol == 0 ? 1e-12 : atol * 10) {
    if (compare_outputs(reference, *fast, {c.rtol, atol, &varying}).equal) {
      c.atol = atol * 10;
      break;
    }
  }
  c.why = "'" + benchmark + "': rtol " + format_numbers("%g", c.rtol) + ", atol " + format_numbers("%g", c.atol) +
          ": built with fast-math flags, the original's output moved by up to " +
          format_numbers("%.2g", c.max_relative) + " (relative); ten times that, and no tighter than " +
          format_numbers("%g", kFloorRtol) + " for floating-point output" +
          (c.max_relative * 10 > kCapRtol ? " (capped: check that the output is deterministic)" : "");
  return c;
}

std::vector<ToleranceChoice> probe_tolerances(const ToleranceProbe& probe, const std::vector<std::string>& references,
                                              const std::vector<std::vector<VaryingField>>& varying,
                                              Progress& progress) {
  const Config& config = probe.config;
  std::vector<ToleranceChoice> choices(config.benchmarks.size());
  bool any = false;
  for (std::size_t b = 0; b < config.benchmarks.size(); ++b)
    any = any || (b < references.size() && config.benchmarks[b].compare_output && prints_floats(references[b]));
  if (!any) {
    for (std::size_t b = 0; b < config.benchmarks.size(); ++b) choices[b].benchmark = config.benchmarks[b].name;
    return choices;
  }
  const fs::path copy = probe.work_dir / "fast-math";
  copy_tree(probe.source, copy, config.workspace.exclude);
  // Run by root, the sandbox runs the build as an unprivileged user, who must be able to
  // write the copy (else the fast-math build fails and no tolerance is measured).
  if (probe.isolation != Isolation::kNone) hand_to_sandbox_user(copy.string());
  auto step = [&](const std::string& shell, double timeout_s, std::vector<std::pair<std::string, std::string>> env) {
    Command c;
    c.shell = shell;
    c.cwd = copy.string();
    c.env = std::move(env);
    c.timeout_s = timeout_s;
    c.isolate = probe.isolation != Isolation::kNone;
    c.writable_paths = {copy.string()};
    apply_workspace_limits(c, config.workspace);
    return run_isolated(c, probe.isolation);
  };
  const std::vector<std::pair<std::string, std::string>> flags{
      {"CFLAGS", "-O3 -ffast-math"}, {"CXXFLAGS", "-O3 -ffast-math"}, {"CUDAFLAGS", "--use_fast_math"}};
  progress.status("init: building the original with fast-math flags, to choose tolerances");
  bool built = true;
  if (!config.build.configure.empty()) built = step(config.build.configure, config.build.timeout_s, flags).ok();
  built = built && step(config.build.command, config.build.timeout_s, flags).ok();
  for (std::size_t b = 0; b < config.benchmarks.size(); ++b) {
    const BenchmarkConfig& bench = config.benchmarks[b];
    const std::string reference = b < references.size() ? references[b] : "";
    const std::vector<VaryingField> none;
    const std::vector<VaryingField>& mask = b < varying.size() ? varying[b] : none;
    if (!bench.compare_output || !prints_floats(reference)) {
      choices[b] = choose_tolerance(bench.name, "", nullptr, mask);
      continue;
    }
    std::optional<std::string> fast;
    if (built) {
      progress.status("init: running '" + bench.name + "' built with fast-math flags");
      Outcome o = step(bench.command, bench.timeout_s, {{"MAXCODE_SEED", std::to_string(probe.seed)}});
      if (o.ok()) fast = o.out;
    }
    choices[b] = choose_tolerance(bench.name, reference, fast ? &*fast : nullptr, mask);
  }
  return choices;
}

}  // namespace maxcode
