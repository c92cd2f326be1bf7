#include "runner/evaluate/gpu/clock_monitor.h"

#include <algorithm>
#include <chrono>

namespace maxcode {

nlohmann::json to_json(const ClockSample& s) {
  nlohmann::json j = {{"sm_mhz", s.sm_mhz}, {"max_sm_mhz", s.max_sm_mhz}, {"throttled", s.throttled()}};
  if (s.throttled()) j["throttle_reasons"] = throttle_reason_names(s.throttle_reasons);
  return j;
}

ClockMonitor::ClockMonitor(const std::optional<NvmlDevice>& device) : device_(device) {
  if (!device_ || !Nvml::instance().available()) return;
  running_ = true;
  thread_ = std::thread([this] {
    const Nvml& nvml = Nvml::instance();
    // 2 ms: short enough to catch the clock of a benchmark that runs for a fraction of
    // a second, cheap enough (an NVML read is ~10 us) to add no load.
    while (running_.load(std::memory_order_relaxed)) {
      if (auto r = nvml.read_clocks(*device_)) {
        ++sample_.readings;
        sample_.sm_mhz = std::max(sample_.sm_mhz, r->sm_mhz);
        sample_.max_sm_mhz = r->max_sm_mhz;
        sample_.throttle_reasons |= r->throttle_reasons;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
}

ClockMonitor::~ClockMonitor() { stop(); }

std::optional<ClockSample> ClockMonitor::stop() {
  if (thread_.joinable()) {
    running_ = false;
    thread_.join();
  }
  if (sample_.readings == 0) return std::nullopt;
  return sample_;
}

}  // namespace maxcode
