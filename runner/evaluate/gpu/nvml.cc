#include "runner/evaluate/gpu/nvml.h"

#include <dlfcn.h>

#include <algorithm>
#include <type_traits>
#include <utility>

namespace maxcode {

namespace {

// The few entry points used, with NVML's C ABI (nvml.h is not part of the toolkit we
// build with; these signatures have been stable since NVML 2).
using Handle = void*;
using Result = int;
constexpr Result kSuccess = 0;
constexpr Result kInsufficientSize = 7;
constexpr int kClockSm = 1;

// nvmlProcessInfo_t as nvmlDeviceGetComputeRunningProcesses_v3 fills it.
struct ProcessInfo {
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id;
  unsigned compute_instance_id;
};

}  // namespace

struct Nvml::Api {
  Result (*init)() = nullptr;
  Result (*count)(unsigned*) = nullptr;
  Result (*by_index)(unsigned, Handle*) = nullptr;
  Result (*by_uuid)(const char*, Handle*) = nullptr;
  Result (*uuid)(Handle, char*, unsigned) = nullptr;
  Result (*name)(Handle, char*, unsigned) = nullptr;
  Result (*index)(Handle, unsigned*) = nullptr;
  Result (*clock)(Handle, int, unsigned*) = nullptr;
  Result (*max_clock)(Handle, int, unsigned*) = nullptr;
  Result (*reasons)(Handle, unsigned long long*) = nullptr;
  Result (*processes)(Handle, unsigned*, ProcessInfo*) = nullptr;  // optional: older drivers lack v3
  const char* (*error_string)(Result) = nullptr;
};

Nvml& Nvml::instance() {
  static Nvml nvml;
  return nvml;
}

Nvml::Nvml() {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    error_ = "libnvidia-ml.so.1 not found (no NVIDIA driver)";
    return;
  }
  auto* api = new Api;
  auto load = [&](auto& fn, const char* symbol) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, symbol));
    return fn != nullptr;
  };
  bool ok = load(api->init, "nvmlInit_v2") && load(api->count, "nvmlDeviceGetCount_v2") &&
            load(api->by_index, "nvmlDeviceGetHandleByIndex_v2") &&
            load(api->by_uuid, "nvmlDeviceGetHandleByUUID") && load(api->uuid, "nvmlDeviceGetUUID") &&
            load(api->name, "nvmlDeviceGetName") && load(api->index, "nvmlDeviceGetIndex") &&
            load(api->clock, "nvmlDeviceGetClockInfo") && load(api->max_clock, "nvmlDeviceGetMaxClockInfo");
  // Renamed in recent drivers; either name reads the same bits.
  if (ok && !load(api->reasons, "nvmlDeviceGetCurrentClocksEventReasons"))
    ok = load(api->reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  if (ok) {
    load(api->processes, "nvmlDeviceGetComputeRunningProcesses_v3");
    load(api->error_string, "nvmlErrorString");
  }
  if (!ok) {
    error_ = "libnvidia-ml.so.1 lacks an expected entry point";
    delete api;
    return;
  }
  if (api->init() != kSuccess) {
    error_ = "nvmlInit failed";
    delete api;
    return;
  }
  api_ = api;  // never unloaded: timing threads may still read clocks at exit
  available_ = true;
}

unsigned Nvml::device_count() const {
  unsigned n = 0;
  if (!available_ || api_->count(&n) != kSuccess) return 0;
  return n;
}

namespace {

std::optional<NvmlDevice> describe(const auto& api, Handle handle) {
  NvmlDevice d;
  d.handle = handle;
  char text[128] = {};
  if (api->uuid(handle, text, sizeof text) == kSuccess) d.uuid = text;
  if (api->name(handle, text, sizeof text) == kSuccess) d.name = text;
  api->index(handle, &d.index);
  return d;
}

}  // namespace

std::optional<NvmlDevice> Nvml::device_by_index(unsigned index) const {
  Handle h = nullptr;
  if (!available_ || api_->by_index(index, &h) != kSuccess) return std::nullopt;
  return describe(api_, h);
}

std::optional<NvmlDevice> Nvml::device_by_uuid(const std::string& uuid) const {
  Handle h = nullptr;
  if (!available_ || api_->by_uuid(uuid.c_str(), &h) != kSuccess) return std::nullopt;
  return describe(api_, h);
}

std::optional<ClockReading> Nvml::read_clocks(const NvmlDevice& device) const {
  if (!available_ || !device.handle) return std::nullopt;
  ClockReading r;
  unsigned long long reasons = 0;
  if (api_->clock(device.handle, kClockSm, &r.sm_mhz) != kSuccess) return std::nullopt;
  api_->max_clock(device.handle, kClockSm, &r.max_sm_mhz);
  if (api_->reasons(device.handle, &reasons) == kSuccess) r.throttle_reasons = reasons & kThrottleMask;
  return r;
}

Nvml::ComputeProcesses Nvml::compute_processes(const NvmlDevice& device) const {
  ComputeProcesses out;
  if (!available_ || !device.handle) {
    out.error = available_ ? "no NVML handle for the device" : error_;
    return out;
  }
  if (!api_->processes) {
    out.error = "libnvidia-ml.so.1 lacks nvmlDeviceGetComputeRunningProcesses_v3 (driver older than R470)";
    return out;
  }
  // Processes come and go between calls: grow the buffer while NVML says it is short.
  std::vector<ProcessInfo> infos(16);
  for (int attempt = 0; attempt < 4; ++attempt) {
    unsigned count = static_cast<unsigned>(infos.size());
    const Result r = api_->processes(device.handle, &count, infos.data());
    if (r == kSuccess) {
      for (unsigned i = 0; i < count && i < infos.size(); ++i) out.pids.push_back(infos[i].pid);
      return out;
    }
    if (r != kInsufficientSize) {
      const char* text = api_->error_string ? api_->error_string(r) : nullptr;
      out.error = std::string("nvmlDeviceGetComputeRunningProcesses: ") + (text ? text : "error " + std::to_string(r));
      return out;
    }
    infos.resize(std::max<std::size_t>(count, infos.size()) * 2);
  }
  out.error = "nvmlDeviceGetComputeRunningProcesses: the process list kept growing";
  return out;
}

std::string throttle_reason_names(std::uint64_t reasons) {
  static const std::pair<std::uint64_t, const char*> names[] = {
      {0x4, "power cap"},       {0x8, "HW slowdown"}, {0x20, "SW thermal"},
      {0x40, "HW thermal"},     {0x80, "power brake"}};
  std::string out;
  for (const auto& [bit, name] : names)
    if (reasons & bit) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

}  // namespace maxcode
