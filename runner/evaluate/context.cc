#include "runner/evaluate/context.h"

#include <algorithm>
#include <cstdio>

#include "runner/util/files.h"
#include "runner/util/slug.h"
#include "runner/workspace/patch.h"

namespace maxcode {

namespace fs = std::filesystem;

EvaluationContext::EvaluationContext(const Config& config_in, const SourceSnapshot& source_in, const Target& target_in,
                                     const Unit& unit_in, EvaluatorOptions options_in, Progress& progress_in)
    : config(config_in),
      source(source_in),
      target(target_in),
      unit(unit_in),
      extent(unit_in.functions.empty() ? Extent{} : unit_in.functions.front().extent),
      options(std::move(options_in)),
      progress(progress_in),
      gpu(uses_gpu_timing(config_in)),
      rng_(config_in.search.seed * 0x9E3779B97F4A7C15ull + 17) {
  // No target: there is no definition to replace.
  if (!target.file.empty()) {
    original_file = read_text(source.root / target.file);
    baseline_definition = unit_text(original_file, unit);
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(rng_()));
  tag = hex;
  reference_key = rng_() | 1;
}

fs::path EvaluationContext::new_workspace_dir(const std::string& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  return options.work_dir / ("ws-" + std::to_string(++workspace_counter_) + "-" + ref_slug(id).substr(0, 40));
}

std::uint64_t EvaluationContext::random() {
  std::lock_guard<std::mutex> lock(mutex_);
  return rng_();
}

void EvaluationContext::warn(const std::string& warning) {
  std::lock_guard<std::mutex> lock(mutex_);
  warnings_.push_back(warning);
}

void EvaluationContext::warn_once(const std::string& warning) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (std::find(warnings_.begin(), warnings_.end(), warning) == warnings_.end()) warnings_.push_back(warning);
}

Isolation EvaluationContext::isolation() const {
  return config.workspace.isolate ? available_isolation() : Isolation::kNone;
}

}  // namespace maxcode
