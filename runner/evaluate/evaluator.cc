// The evaluator's shared state: construction, workspaces, the environment every step
// runs with, and clean-up. The steps live beside it: materialize.cc, check.cc,
// timing.cc, gpu_checks.cc.
#include "runner/evaluate/evaluator.h"

#include "runner/util/files.h"
#include "runner/workspace/patch.h"
#include "runner/util/slug.h"

namespace maxcode {

namespace fs = std::filesystem;


Evaluator::Evaluator(const Config& config, const SourceSnapshot& source, const Target& target,
                     const Unit& unit, std::vector<Knob> knobs, EvaluatorOptions options,
                     Progress& progress)
    : config_(config),
      source_(source),
      target_(target),
      unit_(unit),
      extent_(unit.functions.empty() ? Extent{} : unit.functions.front().extent),
      knobs_(std::move(knobs)),
      options_(std::move(options)),
      progress_(progress),
      rng_(config.search.seed * 0x9E3779B97F4A7C15ull + 17) {
  // No target (`maxcode init` checking the original): only prepare_baseline and
  // measure_noise may be called; there is no definition to replace.
  if (!target_.file.empty()) {
    original_file_ = read_text(source_.root / target_.file);
    baseline_definition_ = unit_text(original_file_, unit_);
  }
  gpu_ = uses_gpu_timing(config_);
  char tag[17];
  std::snprintf(tag, sizeof tag, "%016llx", static_cast<unsigned long long>(rng_()));
  shim_tag_ = tag;
  reference_key_ = rng_() | 1;
  if (gpu_) {
    devices_ = visible_gpus(options_.env.cuda_visible_devices ? options_.env.cuda_visible_devices->c_str() : nullptr);
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
  return options_.work_dir / ("ws-" + std::to_string(++workspace_counter_) + "-" + ref_slug(id).substr(0, 40));
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
    // Read here, not at the CLI: the child's own value is extended, not configuration.
    const char* theirs = std::getenv("NVCC_APPEND_FLAGS");
    env.push_back({"NVCC_APPEND_FLAGS", std::string(theirs && *theirs ? std::string(theirs) + " " : "") + "-Xptxas=-v"});
  }
  return env;
}

void Evaluator::release(Checked& c) noexcept {
  if (!options_.keep_workspaces) {
    if (!c.workspace.empty()) remove_workspace(c.workspace);
    if (!c.calls_workspace.empty()) remove_workspace(c.calls_workspace);
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!c.workspace.empty()) seals_.erase(c.workspace);
    if (!c.calls_workspace.empty()) seals_.erase(c.calls_workspace);
  }
  c.workspace.clear();
  c.calls_workspace.clear();
}

}  // namespace maxcode
