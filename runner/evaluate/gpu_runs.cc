#include "runner/evaluate/gpu_runs.h"

#include <set>

#include "runner/evaluate/evaluator_steps.h"
#include "runner/evaluate/gpu/launch_audit.h"
#include "runner/evaluate/gpu/launch_consistency.h"
#include "runner/instrument/inject_paths.h"
#include "runner/util/beneath.h"
#include "runner/util/format.h"

namespace maxcode {

namespace fs = std::filesystem;
using namespace evaluator_steps;

GpuRuns::GpuRuns(EvaluationContext& context) : ctx_(context) {
  const std::size_t n = ctx_.config.benchmarks.size();
  original_runs_.assign(n, std::nullopt);
  floors_.assign(n, 0.0);
  for (std::size_t b = 0; b < n; ++b) selections_.emplace_back(std::vector<std::string>{}, std::set<std::string>{}, 0);
  if (!ctx_.gpu) return;
  const auto& visible = ctx_.options.env.cuda_visible_devices;
  devices_ = visible_gpus(visible ? visible->c_str() : nullptr);
  if (devices_.empty())
    throw SetupError("benchmarks are timed by their kernels, but CUDA_VISIBLE_DEVICES hides every GPU");
}

void GpuRuns::prepare_injection(StepRunner& steps) {
  InjectLibraries libs = find_inject_libraries();
  if (libs.cupti.empty())
    throw SetupError(
        "benchmarks are timed by their kernels (metric \"kernels\"), but this maxcode has "
        "no CUPTI injection library (libmaxcode_cupti.so) beside it");
  cupti_library_ = copy_into_work_dir(libs.cupti, ctx_.options.work_dir);
  // Read-only, so that a candidate cannot replace the profiler that times it.
  steps.show_read_only(fs::path(cupti_library_).parent_path().string());
}

EnvVars GpuRuns::device_env(const GpuDevice* device) const {
  if (!device || device->visible.empty()) return {};
  return {{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}, {"CUDA_VISIBLE_DEVICES", device->visible}};
}

GpuRun GpuRuns::start(const fs::path& ws, const GpuDevice* device) {
  GpuRun r;
  r.root = ws;
  r.dir = ws / ".maxcode-gpu" / std::to_string(ctx_.next_run());
  make_dirs_beneath(ws, r.dir);  // a link an earlier run planted is not followed
  // Check runs and timed runs get the same environment: a candidate cannot tell
  // whether it is being timed.
  r.env = {{"CUDA_INJECTION64_PATH", cupti_library_}};
  // The records come back through a socket in a directory the benchmark cannot write:
  // files in its workspace it could rewrite after the fact.
  try {
    r.socket = std::make_unique<RecordSocket>();
    r.env.push_back({"MAXCODE_PROFILE_SOCKET", r.socket->path()});
    r.readable_paths = {r.socket->dir()};
  } catch (const std::exception& error) {
    ctx_.warn_once(std::string("GPU records come from files the benchmark could rewrite: ") + error.what());
    r.env.push_back({"MAXCODE_PROFILE_DIR", r.dir.string()});
  }
  auto pin = device_env(device);
  r.env.insert(r.env.end(), pin.begin(), pin.end());
  return r;
}

RunKernels GpuRuns::records(GpuRun& gpu) {
  if (!gpu.socket) return read_run_kernels(gpu.dir, gpu.root);
  const RecordStreams streams = gpu.socket->finish();
  gpu.socket.reset();
  if (!streams.problems.empty()) throw std::runtime_error(streams.problems.front());
  RunKernels run;
  for (const GpuSummary& summary : streams.summaries) add_summary(run, summary);
  return run;
}

void GpuRuns::keep_original(std::size_t b, RunKernels run) {
  const BenchmarkConfig& bench = ctx_.config.benchmarks[b];
  if (run.processes() == 0)
    throw SetupError("benchmark '" + bench.name +
                     "' is timed by its kernels, but no GPU activity "
                     "was recorded: it does not use CUDA, or CUPTI could not attach");
  if (!run.messages.empty())
    throw SetupError("benchmark '" + bench.name + "': CUPTI reported: " + join(run.messages, "; "));
  std::set<std::string> names;
  for (const auto& [name, k] : run.kernels) names.insert(name);
  selections_[b] = KernelSelection(bench.kernels, names, bench.warmup_launches);
  if (selections_[b].counted_launches(run) == 0)
    throw SetupError("benchmark '" + bench.name + "': no kernel to time (" + std::to_string(run.kernels.size()) +
                     " kernel(s) ran, none matched \"kernels\" past the " + std::to_string(bench.warmup_launches) +
                     " warm-up launch(es))");
  original_runs_[b] = std::move(run);
}

std::string GpuRuns::check(std::size_t b, const RunKernels& run, double seconds, bool alone,
                           const RunKernels* against) const {
  if (run.processes() == 0) return "no GPU activity was recorded (CUPTI could not attach, or the program used no CUDA)";
  if (run.dropped > 0)
    return "CUPTI lost " + std::to_string(run.dropped) + " activity records: the kernel time would be incomplete";
  const RunKernels* original = against ? against : original_runs_[b] ? &*original_runs_[b] : nullptr;
  if (original) {
    std::string why = check_against_baseline(*original, run, selections_[b]);
    if (!why.empty()) return why;
    // After: a candidate with no counted kernel at all keeps that plainer reason.
    why = check_launch_audit(*original, run);
    if (!why.empty()) return why;
    why = check_launch_consistency(*original, run, selections_[b], alone);
    if (!why.empty()) return "per-call consistency: " + why;
  }
  if (floors_[b] > 0 && seconds < floors_[b])
    return format_numbers(
        "faster than the hardware allows: %.4f ms of kernel time is below the roofline floor of "
        "%.4f ms (the declared minimum work at the GPU's peak rates)",
        seconds * 1e3, floors_[b] * 1e3);
  return {};
}

}  // namespace maxcode
