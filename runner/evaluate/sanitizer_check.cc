#include "runner/evaluate/sanitizer_check.h"

#include "runner/evaluate/evaluator_steps.h"
#include "runner/evaluate/gpu/cuda_tools.h"
#include "runner/evaluate/gpu/sanitizer.h"

namespace maxcode {

namespace fs = std::filesystem;
using namespace evaluator_steps;

void SanitizerCheck::prepare() {
  const std::string sanitizer = find_cuda_tool("compute-sanitizer");
  if (ctx_.config.gpu.sanitizer.empty()) return;  // nothing asked for
  if (sanitizer.empty()) {
    ctx_.warn("compute-sanitizer not found: GPU winners are not checked for memory errors and races");
    return;
  }
  for (const std::string& tool : ctx_.config.gpu.sanitizer) {
    ctx_.progress.status("baseline: compute-sanitizer " + tool);
    Evaluation scratch;
    scratch.gpu = nlohmann::json::object();
    if (run_tool(scratch, ctx_.baseline_workspace, nullptr, gpu_.first_device(), sanitizer, tool))
      tools_.push_back(tool);
    else
      ctx_.warn("the original itself fails compute-sanitizer " + tool + " (" + scratch.reason +
                "): candidates are not checked with it");
  }
}

bool SanitizerCheck::check(Evaluation& e, const fs::path& ws, const FileOverrides& overrides, const GpuDevice* device) {
  const std::string sanitizer = find_cuda_tool("compute-sanitizer");
  for (const std::string& tool : tools_) {
    ctx_.progress.status(e.candidate_id + ": compute-sanitizer " + tool);
    if (!run_tool(e, ws, &overrides, device, sanitizer, tool)) return false;
  }
  return true;
}

bool SanitizerCheck::run_tool(Evaluation& e, const fs::path& ws, const FileOverrides* overrides,
                              const GpuDevice* device, const std::string& sanitizer, const std::string& tool) {
  const Config& config = ctx_.config;
  std::vector<std::string> commands;
  if (config.gpu.sanitize == "test")
    commands.push_back(config.test.command);
  else
    for (const BenchmarkConfig& bench : config.benchmarks) commands.push_back(bench.command);
  for (const std::string& command : commands) {
    auto env = gpu_.device_env(device);
    env.push_back({"MAXCODE_SEED", std::to_string(config.acceptance.seeds.front())});
    auto r = steps_.run(e, Step("compute-sanitizer " + tool, shell_command(sanitizer_argv(sanitizer, tool, command)),
                                ws, config.gpu.sanitizer_timeout_s)
                               .on(overrides)
                               .with_env(env));
    const SanitizerReport report = parse_sanitizer_output(r.outcome.err + "\n" + r.outcome.out, tool);
    nlohmann::json record = {
        {"tool", tool}, {"command", command}, {"errors", report.errors}, {"status", r.outcome.describe()}};
    if (!report.excerpt.empty()) record["excerpt"] = report.excerpt;
    e.gpu["sanitizer"].push_back(record);
    if (!r.tampered.empty()) {
      e.verdict = Verdict::kRejected;
      e.reason = r.tampering("compute-sanitizer");
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

}  // namespace maxcode
