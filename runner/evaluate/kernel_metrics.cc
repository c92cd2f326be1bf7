#include "runner/evaluate/kernel_metrics.h"

#include <algorithm>

#include "runner/evaluate/evaluator_steps.h"
#include "runner/evaluate/gpu/cuda_tools.h"
#include "runner/evaluate/gpu/witness.h"
#include "runner/util/beneath.h"
#include "runner/util/names.h"

namespace maxcode {

namespace fs = std::filesystem;
using namespace evaluator_steps;

void KernelMetrics::prepare() {
  double peak_bytes_per_s = 0, peak_flops_per_s = 0;
  if (ctx_.config.gpu.ncu) {
    ctx_.progress.status("baseline: Nsight Compute metrics of the top kernels");
    original_ = of(nullptr);
    for (const NcuKernel& k : original_) {
      peak_bytes_per_s = std::max(peak_bytes_per_s, k.peak_bytes_per_s);
      peak_flops_per_s = std::max(peak_flops_per_s, k.peak_flops_per_s);
    }
  }
  for (std::size_t b = 0; b < ctx_.config.benchmarks.size(); ++b) {
    const BenchmarkConfig& bench = ctx_.config.benchmarks[b];
    if (bench.metric != "kernels" || (bench.roofline_bytes <= 0 && bench.roofline_flops <= 0)) continue;
    if (peak_bytes_per_s <= 0) {
      ctx_.warn("benchmark '" + bench.name +
                "' declares a roofline, but the GPU's peak rates are "
                "unknown (they come from Nsight Compute): times below it are not caught");
      continue;
    }
    gpu_.set_floor(b, roofline_floor_s(bench.roofline_bytes, bench.roofline_flops, peak_bytes_per_s, peak_flops_per_s));
  }
}

std::vector<NcuKernel> KernelMetrics::warn(const std::string& what) {
  ctx_.warn("Nsight Compute: " + what);
  return {};
}

std::vector<std::string> KernelMetrics::top_kernels(std::size_t b, const Checked* checked) const {
  std::vector<std::pair<std::uint64_t, std::string>> ranked;
  auto add_kernels = [&](const nlohmann::json& kernels) {
    for (const auto& k : kernels)
      if (k.value("counted", false)) ranked.push_back({k.value("total_ns", std::uint64_t{0}), k.value("name", "")});
  };
  if (checked)
    add_kernels(
        checked->evaluation.gpu.value("kernels", nlohmann::json::object()).value("kernels", nlohmann::json::array()));
  else
    add_kernels(to_json(*gpu_.original_run(b), gpu_.selection(b))["kernels"]);
  std::sort(ranked.rbegin(), ranked.rend());
  std::vector<std::string> names;
  for (const auto& [ns, demangled] : ranked) {
    std::string base = function_name_of(demangled);
    if (auto colon = base.rfind("::"); colon != std::string::npos) base = base.substr(colon + 2);
    if (auto angle = base.find('<'); angle != std::string::npos) base = base.substr(0, angle);
    if (!base.empty() && std::find(names.begin(), names.end(), base) == names.end()) names.push_back(base);
    if (static_cast<int>(names.size()) >= ctx_.config.gpu.ncu_kernels) break;
  }
  return names;
}

std::vector<NcuKernel> KernelMetrics::of(const Checked* checked) {
  const std::string ncu = find_cuda_tool("ncu");
  if (!ctx_.gpu || !ctx_.config.gpu.ncu) return {};
  if (ncu.empty()) return warn("ncu not found: no hardware metrics for critiques and no roofline check");
  // The first benchmark timed by kernels; its top kernels by counted time.
  const auto& benchmarks = ctx_.config.benchmarks;
  std::size_t b = 0;
  while (b < benchmarks.size() && benchmarks[b].metric != "kernels") ++b;
  if (b == benchmarks.size() || !gpu_.original_run(b)) return {};
  const std::vector<std::string> names = top_kernels(b, checked);
  if (names.empty()) return warn("no counted kernel to profile");
  const fs::path ws = checked ? checked->workspace : ctx_.baseline_workspace;
  const fs::path log = ws / ".maxcode-gpu" / ("ncu-" + std::to_string(ctx_.next_run()) + ".csv");
  const BenchmarkConfig& bench = benchmarks[b];
  auto env = gpu_.device_env(gpu_.first_device());
  env.push_back({"MAXCODE_SEED", std::to_string(ctx_.config.acceptance.seeds.front())});
  Evaluation scratch;
  try {
    make_dirs_beneath(ws, log.parent_path());  // a link an earlier run planted is not followed
  } catch (const std::exception& error) {
    return warn(error.what());
  }
  const int launches = static_cast<int>(names.size()) * 2;
  Step step("ncu", shell_command(ncu_argv(ncu, names, bench.warmup_launches, launches, log.string(), bench.command)),
            ws, ctx_.config.gpu.ncu_timeout_s);
  if (checked) step.on(checked->materialized.files);
  auto r = steps_.run(scratch, step.with_env(env));
  if (!r.outcome.ok()) return warn("ncu " + r.outcome.describe() + ": " + r.outcome.tail(600));
  try {
    // ncu wrote it inside the workspace, where the benchmark ran alongside.
    std::vector<NcuKernel> kernels = parse_ncu_csv(read_beneath(ws, log, kMaxNcuLogBytes));
    if (kernels.empty()) return warn("no kernel matched " + join(names, ", ") + " in " + bench.command);
    return kernels;
  } catch (const std::exception& error) {
    return warn(error.what());
  }
}

}  // namespace maxcode
