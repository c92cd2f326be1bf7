// Reads a GPU's SM clock every few milliseconds while a timed run goes on, so that
// each timing sample carries the clock it ran at and whether the GPU held its clock
// down (power, thermal). maxcode never sets clocks; it only records them.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "runner/evaluate/gpu/nvml.h"

namespace maxcode {

struct ClockSample {
  unsigned sm_mhz = 0;       // highest SM clock seen during the run (the clock under load)
  unsigned max_sm_mhz = 0;   // the device's maximum
  int readings = 0;
  std::uint64_t throttle_reasons = 0;  // OR over the run, kThrottleMask bits only
  bool throttled() const { return throttle_reasons != 0; }
};

nlohmann::json to_json(const ClockSample& sample);

class ClockMonitor {
 public:
  // Starts reading; does nothing when `device` is absent or NVML is unavailable.
  explicit ClockMonitor(const std::optional<NvmlDevice>& device);
  ~ClockMonitor();
  ClockMonitor(const ClockMonitor&) = delete;
  ClockMonitor& operator=(const ClockMonitor&) = delete;
  // Stops and returns what was seen; nullopt when nothing could be read.
  std::optional<ClockSample> stop();

 private:
  std::optional<NvmlDevice> device_;
  std::atomic<bool> running_{false};
  std::thread thread_;
  ClockSample sample_;
};

}  // namespace maxcode
