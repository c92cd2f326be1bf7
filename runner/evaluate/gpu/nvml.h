// NVML, loaded at run time (libnvidia-ml.so.1 comes with the driver, never with the
// build): device identity, the SM clock and the reasons it is held down, and the
// processes holding a compute context on a device. Without a driver every call reports
// "unavailable" and timing goes on without clock records.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace maxcode {

struct NvmlDevice {
  std::string uuid;  // "GPU-…"
  std::string name;  // "NVIDIA H100 80GB HBM3"
  unsigned index = 0;
  void* handle = nullptr;
};

// One reading of a device's clocks.
struct ClockReading {
  unsigned sm_mhz = 0;
  unsigned max_sm_mhz = 0;
  // nvmlClocksEventReasons bits that mean the clock is held below what the load asks
  // for: power cap, thermal and hardware slowdowns (not idle, not app clock settings).
  std::uint64_t throttle_reasons = 0;
};

class Nvml {
 public:
  static Nvml& instance();  // loads and initializes once; thread-safe
  bool available() const { return available_; }
  const std::string& error() const { return error_; }  // why not available

  unsigned device_count() const;
  std::optional<NvmlDevice> device_by_index(unsigned index) const;
  std::optional<NvmlDevice> device_by_uuid(const std::string& uuid) const;
  std::optional<ClockReading> read_clocks(const NvmlDevice& device) const;
  // Process ids (as the driver sees them: the host's pid namespace) holding a compute
  // context on `device`; an error text instead when NVML cannot say.
  struct ComputeProcesses {
    std::vector<unsigned> pids;
    std::string error;  // empty on success
  };
  ComputeProcesses compute_processes(const NvmlDevice& device) const;

 private:
  Nvml();
  bool available_ = false;
  std::string error_;
  struct Api;
  Api* api_ = nullptr;
};

// Human names of the throttle bits set in `reasons`, e.g. "power cap, HW slowdown".
std::string throttle_reason_names(std::uint64_t reasons);
constexpr std::uint64_t kThrottleMask = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;

}  // namespace maxcode
