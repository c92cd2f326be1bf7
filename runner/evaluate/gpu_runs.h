// The GPU side of every benchmark run timed by its kernels: which GPUs may be used, the
// environment that puts a run under the CUPTI injection (the records come back through
// a socket the run cannot write), and the checks of a run's kernel activity against the
// original's (the launch audit, per-call consistency) and the roofline.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runner/evaluate/context.h"
#include "runner/evaluate/gpu/devices.h"
#include "runner/evaluate/gpu/kernel_time.h"
#include "runner/evaluate/gpu/record_socket.h"
#include "runner/evaluate/step_runner.h"

namespace maxcode {

// One run of a benchmark on a GPU: the socket its processes report through (files in
// `dir` only where no socket could be made), and the environment that says so.
struct GpuRun {
  std::filesystem::path root;  // the workspace: `dir` is read beneath it (util/beneath.h)
  std::filesystem::path dir;
  EnvVars env;
  std::unique_ptr<RecordSocket> socket;
  std::vector<std::string> readable_paths;  // the socket's directory, read-only in the sandbox
};

class GpuRuns {
 public:
  // Throws SetupError when GPU timing is asked for and CUDA_VISIBLE_DEVICES hides every GPU.
  explicit GpuRuns(EvaluationContext& context);

  // Copies the CUPTI injection library into the work directory (a sandbox may give the
  // benchmark a private /tmp) and shows it to every step read-only.
  void prepare_injection(StepRunner& steps);
  // The environment of a run in `workspace` pinned to `device` (null: not pinned).
  GpuRun start(const std::filesystem::path& workspace, const GpuDevice* device);
  // What the run's processes reported; throws std::runtime_error when the channel was
  // tampered with or a file is unreadable.
  RunKernels records(GpuRun& run);
  // The original's first run of benchmark `b`: what every candidate's is held against.
  // Throws SetupError when it cannot be (no activity, no kernel to count).
  void keep_original(std::size_t b, RunKernels run);
  // Empty when a run of benchmark `b` may be timed, else the reason it is rejected.
  // `original`: the run to hold it against (null: the original's plain run). `alone`:
  // it held the GPU alone, so its launch durations can be judged.
  std::string check(std::size_t b, const RunKernels& run, double seconds, bool alone,
                    const RunKernels* original = nullptr) const;
  EnvVars device_env(const GpuDevice* device) const;

  const std::vector<GpuDevice>& devices() const { return devices_; }
  const GpuDevice* first_device() const { return devices_.empty() ? nullptr : &devices_.front(); }
  const KernelSelection& selection(std::size_t b) const { return selections_.at(b); }
  const std::optional<RunKernels>& original_run(std::size_t b) const { return original_runs_.at(b); }
  // The roofline floor of benchmark `b` in seconds (0: none), set from the GPU's peaks.
  void set_floor(std::size_t b, double seconds) { floors_.at(b) = seconds; }
  double floor(std::size_t b) const { return floors_.at(b); }

 private:
  EvaluationContext& ctx_;
  std::vector<GpuDevice> devices_;                        // one timing worker each
  std::string cupti_library_;                             // the injection library
  std::vector<std::optional<RunKernels>> original_runs_;  // per benchmark
  std::vector<KernelSelection> selections_;               // per benchmark
  std::vector<double> floors_;                            // per benchmark
};

}  // namespace maxcode
