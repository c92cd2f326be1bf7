#include "runner/instrument/gpu_activity.h"

#include <algorithm>
#include <stdexcept>

namespace maxcode {

namespace {

constexpr const char* kFormat = "maxcode-gpu/1";

}  // namespace

std::uint64_t GpuSummary::kernel_ns() const {
  std::uint64_t total = 0;
  for (const auto& k : kernels) total += k.total_ns;
  return total;
}

std::uint64_t GpuSummary::transfer_ns() const {
  std::uint64_t total = 0;
  for (const auto& t : transfers) total += t.total_ns;
  return total;
}

std::uint64_t ApiCalls::ipc_calls() const {
  std::uint64_t total = 0;
  for (const auto& [name, n] : ipc) total += n;
  return total;
}

std::uint64_t ApiCalls::unrecorded_launches() const {
  return launches > launch_records ? launches - launch_records : 0;
}

void GpuActivity::add_interval(std::uint64_t start, std::uint64_t end) {
  if (end < start) end = start;
  first_ns_ = std::min(first_ns_, start);
  last_ns_ = std::max(last_ns_, end);
  if (intervals_.size() < kMaxIntervals) intervals_.emplace_back(start, end);
  else overflow_ns_ += end - start;
}

void GpuActivity::add_kernel(const KernelLaunch& launch) {
  const std::uint64_t ns = launch.end_ns > launch.start_ns ? launch.end_ns - launch.start_ns : 0;
  KernelStats& k = kernels_[{launch.name, launch.grid, launch.block, launch.device}];
  if (k.launches == 0) {
    k.name = launch.name, k.grid = launch.grid, k.block = launch.block, k.device = launch.device;
    k.min_ns = ns;
    k.first_start_ns = launch.start_ns, k.first_launch_ns = ns;
  } else if (launch.start_ns < k.first_start_ns) {  // records need not arrive in order
    k.first_start_ns = launch.start_ns, k.first_launch_ns = ns;
  }
  ++k.launches;
  k.total_ns += ns;
  k.min_ns = std::min(k.min_ns, ns);
  k.max_ns = std::max(k.max_ns, ns);
  // Fixed per kernel in practice; the largest is the one that limits occupancy.
  k.registers = std::max(k.registers, launch.registers);
  k.static_smem = std::max(k.static_smem, launch.static_smem);
  k.dynamic_smem = std::max(k.dynamic_smem, launch.dynamic_smem);
  auto at = std::lower_bound(k.streams.begin(), k.streams.end(), launch.stream);
  if (at == k.streams.end() || *at != launch.stream) k.streams.insert(at, launch.stream);
  add_interval(launch.start_ns, launch.end_ns);
  if (!launch.from_graph) ++launch_records_;
}

void GpuActivity::add_transfer(const std::string& kind, std::uint64_t bytes, std::uint64_t start_ns,
                               std::uint64_t end_ns) {
  TransferStats& t = transfers_[kind];
  t.kind = kind;
  ++t.count;
  t.bytes += bytes;
  t.total_ns += end_ns > start_ns ? end_ns - start_ns : 0;
  add_interval(start_ns, end_ns);
}

void GpuActivity::add_message(const std::string& message) {
  // The same failure tends to repeat for every buffer: keep each text once, and few.
  if (messages_.size() < 20 && std::find(messages_.begin(), messages_.end(), message) == messages_.end())
    messages_.push_back(message);
}

GpuSummary GpuActivity::summary(long pid, const std::string& exe, bool complete) const {
  GpuSummary s;
  s.pid = pid;
  s.exe = exe;
  s.complete = complete;
  s.dropped = dropped_;
  s.messages = messages_;
  s.api.launch_records = launch_records_;
  if (!intervals_.empty()) {
    s.first_ns = first_ns_;
    s.last_ns = last_ns_;
    auto sorted = intervals_;
    std::sort(sorted.begin(), sorted.end());
    std::uint64_t busy = 0, open_start = sorted[0].first, open_end = sorted[0].second;
    for (const auto& [start, end] : sorted) {
      if (start > open_end) {
        busy += open_end - open_start;
        open_start = start;
      }
      open_end = std::max(open_end, end);
    }
    busy += open_end - open_start;
    s.busy_ns = std::min(busy + overflow_ns_, last_ns_ - first_ns_);
    s.busy_exact = overflow_ns_ == 0;
  }
  for (const auto& [key, k] : kernels_) s.kernels.push_back(k);
  std::sort(s.kernels.begin(), s.kernels.end(),
            [](const KernelStats& a, const KernelStats& b) { return a.total_ns > b.total_ns; });
  for (const auto& [kind, t] : transfers_) s.transfers.push_back(t);
  return s;
}

nlohmann::json to_json(const GpuSummary& s) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& k : s.kernels) {
    kernels.push_back({{"name", k.name},           {"grid", k.grid},
                       {"block", k.block},         {"device", k.device},
                       {"launches", k.launches},   {"total_ns", k.total_ns},
                       {"min_ns", k.min_ns},       {"max_ns", k.max_ns},
                       {"first_start_ns", k.first_start_ns}, {"first_launch_ns", k.first_launch_ns},
                       {"registers", k.registers}, {"static_smem", k.static_smem},
                       {"dynamic_smem", k.dynamic_smem}, {"streams", k.streams}});
  }
  nlohmann::json transfers = nlohmann::json::array();
  for (const auto& t : s.transfers)
    transfers.push_back({{"kind", t.kind}, {"count", t.count}, {"bytes", t.bytes}, {"total_ns", t.total_ns}});
  const nlohmann::json api = {{"counted", s.api.counted},
                              {"launches", s.api.launches},
                              {"launch_records", s.api.launch_records},
                              {"graph_launches", s.api.graph_launches},
                              {"contexts_created", s.api.contexts_created},
                              {"ipc", s.api.ipc}};
  return {{"format", kFormat},       {"pid", s.pid},           {"ppid", s.ppid},    {"exe", s.exe},
          {"api", api},
          {"complete", s.complete},  {"first_ns", s.first_ns}, {"last_ns", s.last_ns},
          {"busy_ns", s.busy_ns},    {"busy_exact", s.busy_exact}, {"dropped", s.dropped},
          {"kernels", kernels},      {"transfers", transfers}, {"messages", s.messages}};
}

namespace {

// Field access that names the file and the field on failure.
class Reader {
 public:
  explicit Reader(std::string label) : label_(std::move(label)) {}
  [[noreturn]] void fail(const std::string& field, const std::string& problem) const {
    throw std::runtime_error(label_ + ": " + field + ": " + problem);
  }
  const nlohmann::json& at(const nlohmann::json& object, const char* key, const std::string& path) const {
    if (!object.is_object()) fail(path, "expected an object");
    auto it = object.find(key);
    if (it == object.end()) fail(path.empty() ? key : path + "." + key, "missing");
    return *it;
  }
  template <typename T>
  T number(const nlohmann::json& object, const char* key, const std::string& path) const {
    const nlohmann::json& v = at(object, key, path);
    if (!v.is_number()) fail(path.empty() ? key : path + "." + key, "expected a number");
    return v.get<T>();
  }
  std::string text(const nlohmann::json& object, const char* key, const std::string& path) const {
    const nlohmann::json& v = at(object, key, path);
    if (!v.is_string()) fail(path.empty() ? key : path + "." + key, "expected a string");
    return v.get<std::string>();
  }
  std::array<int, 3> dim3(const nlohmann::json& object, const char* key, const std::string& path) const {
    const nlohmann::json& v = at(object, key, path);
    if (!v.is_array() || v.size() != 3 || !v[0].is_number_integer() || !v[1].is_number_integer() ||
        !v[2].is_number_integer())
      fail(path + "." + key, "expected three integers");
    return {v[0].get<int>(), v[1].get<int>(), v[2].get<int>()};
  }
  const nlohmann::json& array(const nlohmann::json& object, const char* key, const std::string& path) const {
    const nlohmann::json& v = at(object, key, path);
    if (!v.is_array()) fail(path.empty() ? key : path + "." + key, "expected an array");
    return v;
  }

 private:
  std::string label_;
};

KernelStats read_kernel(const Reader& r, const nlohmann::json& k, const std::string& path) {
  KernelStats ks;
  ks.name = r.text(k, "name", path);
  ks.grid = r.dim3(k, "grid", path);
  ks.block = r.dim3(k, "block", path);
  ks.device = k.contains("device") ? r.number<std::uint32_t>(k, "device", path) : 0;
  ks.launches = r.number<std::uint64_t>(k, "launches", path);
  ks.total_ns = r.number<std::uint64_t>(k, "total_ns", path);
  ks.min_ns = r.number<std::uint64_t>(k, "min_ns", path);
  ks.max_ns = r.number<std::uint64_t>(k, "max_ns", path);
  if (k.contains("first_launch_ns")) {  // files of older versions lack them
    ks.first_start_ns = r.number<std::uint64_t>(k, "first_start_ns", path);
    ks.first_launch_ns = r.number<std::uint64_t>(k, "first_launch_ns", path);
  }
  ks.registers = r.number<int>(k, "registers", path);
  ks.static_smem = r.number<int>(k, "static_smem", path);
  ks.dynamic_smem = r.number<int>(k, "dynamic_smem", path);
  if (k.contains("streams")) {
    for (const auto& stream : r.array(k, "streams", path)) {
      if (!stream.is_number_unsigned()) r.fail(path + ".streams", "expected stream ids");
      ks.streams.push_back(stream.get<std::uint32_t>());
    }
  }
  if (ks.launches == 0) r.fail(path + ".launches", "must be at least 1");
  return ks;
}

TransferStats read_transfer(const Reader& r, const nlohmann::json& t, const std::string& path) {
  TransferStats out;
  out.kind = r.text(t, "kind", path);
  out.count = r.number<std::uint64_t>(t, "count", path);
  out.bytes = r.number<std::uint64_t>(t, "bytes", path);
  out.total_ns = r.number<std::uint64_t>(t, "total_ns", path);
  return out;
}

ApiCalls read_api(const Reader& r, const nlohmann::json& api) {
  ApiCalls out;
  const nlohmann::json& counted = r.at(api, "counted", "api");
  if (!counted.is_boolean()) r.fail("api.counted", "expected true or false");
  out.counted = counted.get<bool>();
  out.launches = r.number<std::uint64_t>(api, "launches", "api");
  out.launch_records = r.number<std::uint64_t>(api, "launch_records", "api");
  out.graph_launches = r.number<std::uint64_t>(api, "graph_launches", "api");
  out.contexts_created = r.number<std::uint64_t>(api, "contexts_created", "api");
  const nlohmann::json& ipc = r.at(api, "ipc", "api");
  if (!ipc.is_object()) r.fail("api.ipc", "expected an object of call counts");
  for (const auto& [name, n] : ipc.items()) {
    if (!n.is_number_unsigned()) r.fail("api.ipc." + name, "expected a count");
    out.ipc[name] = n.get<std::uint64_t>();
  }
  return out;
}

}  // namespace

GpuSummary parse_gpu_summary(const nlohmann::json& d, const std::string& label) {
  Reader r(label);
  if (r.text(d, "format", "") != kFormat) r.fail("format", "expected \"" + std::string(kFormat) + "\"");
  GpuSummary s;
  s.pid = r.number<long>(d, "pid", "");
  if (d.contains("ppid")) s.ppid = r.number<long>(d, "ppid", "");
  s.exe = r.text(d, "exe", "");
  const nlohmann::json& complete = r.at(d, "complete", "");
  if (!complete.is_boolean()) r.fail("complete", "expected true or false");
  s.complete = complete.get<bool>();
  s.first_ns = r.number<std::uint64_t>(d, "first_ns", "");
  s.last_ns = r.number<std::uint64_t>(d, "last_ns", "");
  s.busy_ns = r.number<std::uint64_t>(d, "busy_ns", "");
  if (d.contains("busy_exact") && d["busy_exact"].is_boolean()) s.busy_exact = d["busy_exact"].get<bool>();
  s.dropped = r.number<std::uint64_t>(d, "dropped", "");
  const nlohmann::json& kernels = r.array(d, "kernels", "");
  for (std::size_t i = 0; i < kernels.size(); ++i)
    s.kernels.push_back(read_kernel(r, kernels[i], "kernels[" + std::to_string(i) + "]"));
  const nlohmann::json& transfers = r.array(d, "transfers", "");
  for (std::size_t i = 0; i < transfers.size(); ++i)
    s.transfers.push_back(read_transfer(r, transfers[i], "transfers[" + std::to_string(i) + "]"));
  if (d.contains("api")) s.api = read_api(r, d["api"]);  // older files lack the counts: all zero, not counted
  if (d.contains("messages")) {
    for (const auto& m : r.array(d, "messages", ""))
      if (m.is_string()) s.messages.push_back(m.get<std::string>());
  }
  return s;
}

}  // namespace maxcode
