#include "runner/evaluate/gpu/process_monitor.h"

#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>

namespace maxcode {

namespace {

// The parent of `pid` from /proc/<pid>/stat ("pid (comm) state ppid ..."; comm may
// hold spaces and parentheses, so the fields start after the last ')').
std::optional<long> parent_of(long pid, const std::filesystem::path& proc) {
  std::ifstream in(proc / std::to_string(pid) / "stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  const auto close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(close + 1));
  std::string state;
  long ppid = 0;
  if (!(fields >> state >> ppid)) return std::nullopt;
  return ppid;
}

}  // namespace

std::optional<bool> in_tree_of(long pid, long root, const std::filesystem::path& proc) {
  std::optional<long> parent = parent_of(pid, proc);
  if (!parent) return std::nullopt;
  if (pid == root) return true;
  // Deep trees are not a benchmark's; the bound only stops a loop on a changing /proc.
  for (int depth = 0; depth < 256 && parent; ++depth) {
    if (*parent == root) return true;
    if (*parent <= 1) return false;
    parent = parent_of(*parent, proc);
  }
  return false;
}

nlohmann::json to_json(const GpuProcessCount& c) {
  nlohmann::json j = {{"checked", c.checked}, {"processes", c.processes}, {"samples", c.samples}};
  if (!c.note.empty()) j["note"] = c.note;
  return j;
}

std::string check_gpu_processes(const GpuProcessCount& seen, int reported) {
  if (!seen.checked || seen.processes <= reported) return {};
  return std::to_string(seen.processes) + " processes held a GPU context during the run, " +
         std::to_string(reported) + (reported == 1 ? " reported its kernels" : " reported their kernels") +
         ": a process without maxcode's profiler did GPU work";
}

GpuProcessMonitor::GpuProcessMonitor(Lister list, std::string unavailable)
    : list_(std::move(list)), unavailable_(std::move(unavailable)) {
  if (!list_) return;
  running_ = true;
  thread_ = std::thread([this] {
    // 5 ms: a context takes tens of milliseconds to create and is held until the
    // process ends, so no process that did GPU work is missed; a listing costs well
    // under a millisecond.
    while (running_.load(std::memory_order_relaxed)) {
      sample();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
}

GpuProcessMonitor::~GpuProcessMonitor() { stop(); }

void GpuProcessMonitor::started(long root_pid) { root_ = root_pid; }

void GpuProcessMonitor::sample() {
  const long root = root_.load();
  if (root == 0) return;  // the command has not started: nothing of it can hold a context yet
  Nvml::ComputeProcesses listed = list_();
  std::lock_guard<std::mutex> lock(mutex_);
  if (!listed.error.empty()) {
    if (error_.empty()) error_ = listed.error;
    return;
  }
  ++samples_;
  for (unsigned pid : listed.pids) {
    if (seen_.count(pid)) continue;
    const std::optional<bool> ours = in_tree_of(pid, root);
    if (!ours) {
      ++invisible_;
      continue;
    }
    seen_[pid] = *ours;
  }
}

GpuProcessCount GpuProcessMonitor::stop() {
  if (thread_.joinable()) {
    running_ = false;
    thread_.join();
    sample();  // once more: a run shorter than one interval is still seen
  }
  std::lock_guard<std::mutex> lock(mutex_);
  GpuProcessCount c;
  c.samples = samples_;
  for (const auto& [pid, ours] : seen_) c.processes += ours ? 1 : 0;
  if (!list_) c.note = "GPU processes not counted: " + unavailable_;
  else if (samples_ == 0)
    c.note = "GPU processes not counted: " + (error_.empty() ? std::string("no process list was read") : error_);
  else if (seen_.empty() && invisible_ > 0)
    c.note = "GPU processes not counted: NVML's process ids are not visible here (maxcode runs in another pid "
             "namespace than the driver's)";
  else c.checked = true;
  return c;
}

std::unique_ptr<GpuProcessMonitor> monitor_gpu_processes(const std::optional<NvmlDevice>& device) {
  const Nvml& nvml = Nvml::instance();
  if (!nvml.available()) return std::make_unique<GpuProcessMonitor>(nullptr, "NVML unavailable (" + nvml.error() + ")");
  if (!device) return std::make_unique<GpuProcessMonitor>(nullptr, "the GPU has no NVML handle");
  return std::make_unique<GpuProcessMonitor>([&nvml, d = *device] { return nvml.compute_processes(d); });
}

}  // namespace maxcode
