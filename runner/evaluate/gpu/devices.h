// The GPUs this process may time on, and the lock that keeps one GPU to one timing
// session at a time (across every maxcode process on the machine).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "runner/evaluate/gpu/nvml.h"

namespace maxcode {

struct GpuDevice {
  // What child processes get as CUDA_VISIBLE_DEVICES (with CUDA_DEVICE_ORDER=PCI_BUS_ID,
  // so that an index means the same GPU to CUDA, NVML and nvidia-smi); empty: leave
  // the environment as it is.
  std::string visible;
  std::optional<NvmlDevice> nvml;  // absent without a driver (clocks then unknown)
  std::string label() const;       // "GPU 0 (NVIDIA H100 80GB HBM3)"
  std::string lock_key() const;    // what the timing lock is named after
};

// From CUDA_VISIBLE_DEVICES (comma-separated indexes or GPU-UUIDs; unset: every GPU
// NVML sees). Without NVML, one device standing for whatever CUDA picks. `visible` is
// the variable's value, or nullptr for unset.
std::vector<GpuDevice> visible_gpus(const char* visible);

// A flock on <dir>/maxcode-timing-<key>.lock, held while alive. Blocks. Exclusive for
// an A/B session; shared for any other run on the GPU (a check run, a call check), so
// such runs, of this process or another, never overlap a session's rounds, while they
// may overlap each other. Linux lets later shared requests past a waiting exclusive
// one, so checks that overlap without a gap (parallel checks, several maxcode processes
// on one GPU) kept a session out for as long as they went on; every holder therefore
// first takes <key>.gate exclusively and lets go of it once it holds the lock. A
// session waits at most for the checks already running. Never take a second
// TimingLock of one key while holding one: behind a session waiting at the gate, it
// would wait for itself.
class TimingLock {
 public:
  enum class Mode { kExclusive, kShared };
  TimingLock(const std::filesystem::path& dir, const std::string& key, Mode mode = Mode::kExclusive);
  ~TimingLock();
  TimingLock(const TimingLock&) = delete;
  TimingLock& operator=(const TimingLock&) = delete;

 private:
  int fd_ = -1;
};

// Where timing locks live: `configured` (Environment::lock_dir, MAXCODE_LOCK_DIR), else
// the system temp directory.
std::filesystem::path timing_lock_dir(const std::filesystem::path& configured);

}  // namespace maxcode
