#include "runner/evaluate/gpu/devices.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace maxcode {

std::string GpuDevice::label() const {
  std::string out = "GPU " + (visible.empty() ? std::string("(default)") : visible);
  if (nvml && !nvml->name.empty()) out += " (" + nvml->name + ")";
  return out;
}

std::string GpuDevice::lock_key() const {
  if (nvml && !nvml->uuid.empty()) return nvml->uuid;
  return "gpu" + (visible.empty() ? std::string("-default") : "-" + visible);
}

std::vector<GpuDevice> visible_gpus(const char* visible) {
  const Nvml& nvml = Nvml::instance();
  std::vector<GpuDevice> out;
  if (visible == nullptr) {
    for (unsigned i = 0; i < nvml.device_count(); ++i)
      out.push_back({std::to_string(i), nvml.device_by_index(i)});
    if (out.empty()) out.push_back({"", std::nullopt});
    return out;
  }
  std::string list = visible;
  for (std::size_t at = 0; at <= list.size();) {
    std::size_t comma = list.find(',', at);
    if (comma == std::string::npos) comma = list.size();
    std::string entry = list.substr(at, comma - at);
    at = comma + 1;
    while (!entry.empty() && entry.front() == ' ') entry.erase(entry.begin());
    while (!entry.empty() && entry.back() == ' ') entry.pop_back();
    if (entry.empty()) continue;
    std::optional<NvmlDevice> device;
    if (entry.rfind("GPU-", 0) == 0 || entry.rfind("MIG-", 0) == 0) device = nvml.device_by_uuid(entry);
    else if (entry.find_first_not_of("0123456789") == std::string::npos) device = nvml.device_by_index(std::stoul(entry));
    out.push_back({entry, device});
  }
  return out;  // empty: CUDA_VISIBLE_DEVICES hides every GPU
}

std::filesystem::path timing_lock_dir(const std::filesystem::path& configured) {
  if (!configured.empty()) return configured;
  return std::filesystem::temp_directory_path();
}

// An open descriptor of `path` holding an flock of `operation`; throws naming the file.
static int locked(const std::string& path, int operation) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) throw std::runtime_error("cannot open timing lock " + path + ": " + std::strerror(errno));
  while (::flock(fd, operation) != 0) {
    if (errno == EINTR) continue;
    const int err = errno;
    ::close(fd);
    throw std::runtime_error("cannot lock " + path + ": " + std::strerror(err));
  }
  return fd;
}

TimingLock::TimingLock(const std::filesystem::path& dir, const std::string& key, Mode mode) {
  std::string name;
  for (char c : key) name += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_';
  const std::string base = (dir / ("maxcode-timing-" + name)).string();
  // Every holder passes the gate, one at a time, and keeps it only while it waits for the
  // lock: a session waiting there holds back the checks that come after it, so the ones
  // already running drain and it gets in (gpu/devices.h).
  const int gate = locked(base + ".gate", LOCK_EX);
  try {
    fd_ = locked(base + ".lock", mode == Mode::kShared ? LOCK_SH : LOCK_EX);
  } catch (...) {
    ::close(gate);
    throw;
  }
  ::close(gate);
}

TimingLock::~TimingLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

}  // namespace maxcode
