#include "runner/instrument/gpu_activity.h"

#include <algorithm>
#include <stdexcept>

namespace maxcode {

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
  return {{"format", kGpuSummaryFormat},
          {"pid", s.pid},
          {"ppid", s.ppid},
          {"exe", s.exe},
          {"api", api},
          {"complete", s.complete},
          {"first_ns", s.first_ns},
          {"last_ns", s.last_ns},
          {"busy_ns", s.busy_ns},
          {"busy_exact", s.busy_exact},
          {"dropped", s.dropped},
          {"kernels", kernels},
          {"transfers", transfers},
          {"messages", s.messages}};
}

}  // namespace maxcode
