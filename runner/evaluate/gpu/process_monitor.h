// Which processes held a compute context on the benchmark's GPU during one timed run,
// read from NVML every few milliseconds, against the processes that reported their
// kernels through the CUPTI injection.
//
// A candidate can start a child with the injection's variables removed and do the real
// work there (reaching the benchmark's buffers through CUDA IPC), leaving a decoy in the
// process that is timed. That child holds a context of its own on the GPU, which NVML
// lists whatever the child's environment says. Only processes descending from the run's
// own command count (walking parent links in /proc): another candidate's check run on
// the same GPU is not this run's. NVML's process ids are the host's; where maxcode
// cannot see them (it runs in a pid namespace of its own), or NVML cannot list
// processes, the run gets a note and is not judged by this.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "runner/evaluate/gpu/nvml.h"

namespace maxcode {

struct GpuProcessCount {
  bool checked = false;  // NVML listed processes and the run's could be told apart
  int processes = 0;     // distinct processes of the run seen holding a context
  int samples = 0;       // process lists read
  std::string note;      // why the count was not checked, when it was not
};

nlohmann::json to_json(const GpuProcessCount& count);

// Empty unless more of the run's processes held a GPU context than reported their
// kernels through the injection (`reported`): then why the run is rejected.
std::string check_gpu_processes(const GpuProcessCount& seen, int reported);

// Whether process `pid` is `root` or descends from it, by the parent links of
// `proc`/<pid>/stat (a command may exec the benchmark in its own process); nullopt when
// `pid` is not there (gone, or in a pid namespace we cannot see).
std::optional<bool> in_tree_of(long pid, long root, const std::filesystem::path& proc = "/proc");

class GpuProcessMonitor {
 public:
  // Lists the process ids holding a context on the device (Nvml::compute_processes).
  using Lister = std::function<Nvml::ComputeProcesses()>;
  // Starts sampling; with no lister it only records `unavailable` as its note.
  explicit GpuProcessMonitor(Lister list, std::string unavailable = {});
  ~GpuProcessMonitor();
  GpuProcessMonitor(const GpuProcessMonitor&) = delete;
  GpuProcessMonitor& operator=(const GpuProcessMonitor&) = delete;
  // The run's command as it starts: it and its descendants are the run's processes.
  void started(long root_pid);
  // Stops and says what was seen.
  GpuProcessCount stop();

 private:
  void sample();
  Lister list_;
  std::string unavailable_;
  std::atomic<bool> running_{false};
  std::atomic<long> root_{0};
  std::thread thread_;
  std::mutex mutex_;                // guards what sample() fills
  std::map<unsigned, bool> seen_;   // pid -> one of the run's processes
  int samples_ = 0;
  int invisible_ = 0;               // listed pids not found in /proc
  std::string error_;               // the first error NVML gave
};

// The monitor for a timed run on `device` (NVML's listing), or one that notes why
// there is none.
std::unique_ptr<GpuProcessMonitor> monitor_gpu_processes(const std::optional<NvmlDevice>& device);

}  // namespace maxcode
