#include "runner/evaluate/gpu/kernel_time.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "runner/util/beneath.h"
#include "runner/util/format.h"
#include "runner/util/names.h"

namespace maxcode {

namespace fs = std::filesystem;

namespace {

// An activity summary is a few kilobytes per kernel name: a file larger than this was
// not written by the injection library.
constexpr std::size_t kMaxActivityFileBytes = 64u << 20;

std::string megabytes(double bytes) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.1f MB", bytes / 1e6);
  return buffer;
}

}  // namespace

void add_summary(RunKernels& run, const GpuSummary& summary) {
  run.calls.push_back({summary.pid, summary.ppid, summary.exe, summary.complete, summary.dropped, summary.api});
  run.complete = run.complete && summary.complete;
  run.dropped += summary.dropped;
  run.messages.insert(run.messages.end(), summary.messages.begin(), summary.messages.end());
  for (const KernelStats& k : summary.kernels) {
    KernelTotals& t = run.kernels[k.name];
    const bool earlier = t.launches == 0 || k.first_start_ns < t.first_start_ns;
    if (t.launches == 0) {
      t.name = k.name;
      t.demangled = demangle(k.name);
    }
    if (earlier) t.first_start_ns = k.first_start_ns, t.first_launch_ns = k.first_launch_ns;
    t.min_ns = t.launches == 0 ? k.min_ns : std::min(t.min_ns, k.min_ns);
    t.max_ns = std::max(t.max_ns, k.max_ns);
    t.launches += k.launches;
    t.total_ns += k.total_ns;
    t.streams.insert(k.streams.begin(), k.streams.end());
  }
  for (const TransferStats& x : summary.transfers) {
    TransferStats& t = run.transfers[x.kind];
    t.kind = x.kind;
    t.count += x.count;
    t.bytes += x.bytes;
    t.total_ns += x.total_ns;
  }
}

RunKernels read_run_kernels(const fs::path& dir, const fs::path& root_or_dir) {
  const fs::path root = root_or_dir.empty() ? dir : root_or_dir;
  RunKernels run;
  std::vector<BeneathEntry> entries;
  try {
    entries = list_beneath(root, dir);
  } catch (const BeneathError& e) {
    if (e.kind() == BeneathError::Kind::kMissing) return run;  // no process reported
    throw std::runtime_error(std::string("GPU activity records not read: ") + e.what());
  }
  std::vector<fs::path> files;
  for (const BeneathEntry& entry : entries) {
    const fs::path path = dir / entry.name;
    if (entry.name.rfind("gpu-", 0) == 0 && path.extension() == ".json") files.push_back(path);
  }
  for (const fs::path& file : files) {
    nlohmann::json document;
    try {
      // Written by the run's processes: a link or a FIFO among them is refused (the
      // read throws a BeneathError, a std::runtime_error).
      document = nlohmann::json::parse(read_beneath(root, file, kMaxActivityFileBytes));
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(file.string() + ": not a GPU activity file: " + e.what());
    }
    add_summary(run, parse_gpu_summary(document, file.string()));
  }
  return run;
}

KernelSelection::KernelSelection(const std::vector<std::string>& patterns,
                                 std::set<std::string> original, int warmup_launches)
    : original_(std::move(original)), warmup_launches_(warmup_launches) {
  for (const std::string& p : patterns) patterns_.emplace_back(p);
  for (const std::string& name : original_) {
    KernelTotals k;
    k.name = name;
    k.demangled = demangle(name);
    if (counts(k)) warmup_budget_ += static_cast<std::uint64_t>(warmup_launches_);
  }
}

bool KernelSelection::counts(const KernelTotals& kernel) const {
  if (patterns_.empty()) return true;
  if (!original_.empty() && !original_.count(kernel.name)) return true;  // new: always counted
  for (const std::regex& p : patterns_)
    if (std::regex_search(kernel.demangled, p) || std::regex_search(kernel.name, p)) return true;
  return false;
}

std::map<std::string, std::uint64_t> KernelSelection::warmup(const RunKernels& run) const {
  std::vector<const KernelTotals*> counted;
  for (const auto& [name, k] : run.kernels)
    if (counts(k) && k.launches > 0) counted.push_back(&k);
  std::sort(counted.begin(), counted.end(), [](const KernelTotals* a, const KernelTotals* b) {
    return a->first_start_ns != b->first_start_ns ? a->first_start_ns < b->first_start_ns : a->name < b->name;
  });
  const bool budgeted = !original_.empty();
  std::uint64_t budget = warmup_budget_;
  std::map<std::string, std::uint64_t> left_out;
  for (const KernelTotals* k : counted) {
    std::uint64_t n = std::min<std::uint64_t>(static_cast<std::uint64_t>(warmup_launches_), k->launches);
    if (budgeted) n = std::min(n, budget);
    if (n == 0) continue;
    left_out[k->name] = n;
    if (budgeted) budget -= n;
  }
  return left_out;
}

namespace {

// Time of the first `n` launches of `k`: the earliest exactly, further ones at the mean
// of the rest.
double leading_ns(const KernelTotals& k, std::uint64_t n) {
  if (n == 0 || k.launches == 0) return 0;
  const double rest_mean = k.launches > 1 ? (static_cast<double>(k.total_ns) - static_cast<double>(k.first_launch_ns)) /
                                                static_cast<double>(k.launches - 1)
                                          : 0;
  return static_cast<double>(k.first_launch_ns) + rest_mean * static_cast<double>(n - 1);
}

}  // namespace

double KernelSelection::seconds(const RunKernels& run) const {
  const auto left_out = warmup(run);
  double ns = 0;
  for (const auto& [name, k] : run.kernels) {
    if (!counts(k)) continue;
    auto w = left_out.find(name);
    const double dropped = w == left_out.end() ? 0 : leading_ns(k, w->second);
    ns += std::max(0.0, static_cast<double>(k.total_ns) - dropped);
  }
  return ns * 1e-9;
}

double KernelSelection::warmup_seconds(const RunKernels& run) const {
  double ns = 0;
  for (const auto& [name, n] : warmup(run)) ns += std::min(leading_ns(run.kernels.at(name), n),
                                                           static_cast<double>(run.kernels.at(name).total_ns));
  return ns * 1e-9;
}

std::uint64_t KernelSelection::counted_launches_all(const RunKernels& run) const {
  std::uint64_t n = 0;
  for (const auto& [name, k] : run.kernels)
    if (counts(k)) n += k.launches;
  return n;
}

std::uint64_t KernelSelection::counted_launches(const RunKernels& run) const {
  std::uint64_t n = counted_launches_all(run);
  for (const auto& [name, dropped] : warmup(run)) n -= dropped;
  return n;
}

std::string check_against_baseline(const RunKernels& original, const RunKernels& candidate,
                                   const KernelSelection& selection) {
  if (selection.counted_launches_all(original) > 0 && selection.counted_launches_all(candidate) == 0)
    return "no counted kernel ran (the original launched " +
           std::to_string(selection.counted_launches_all(original)) +
           "): kernel timing cannot see where this candidate does its work";
  for (const auto& [kind, t] : candidate.transfers) {
    auto before = original.transfers.find(kind);
    const std::uint64_t had = before == original.transfers.end() ? 0 : before->second.bytes;
    // Copies the harness makes are the same on both sides; any growth is the candidate's.
    if (t.bytes > had + had / 100 + 4096)
      return "moves more data by " + kind + " copies than the original (" + megabytes(t.bytes) +
             " against " + megabytes(had) +
             " per run): work done on the host or by the copy engines is not kernel time";
  }
  // Warm-up hides work only if it is most of the work: the original's share says what
  // warm-up costs for this benchmark.
  const double warm_c = selection.warmup_seconds(candidate), timed_c = selection.seconds(candidate);
  const double warm_o = selection.warmup_seconds(original), timed_o = selection.seconds(original);
  if (warm_c > timed_c && warm_c > 0 && !(warm_o > timed_o))
    return format_numbers("%.3f ms of kernel time was left out as warm-up against %.3f ms timed (the original: "
                          "%.3f ms against %.3f ms): the work is done in launches that are not timed",
                          warm_c * 1e3, timed_c * 1e3, warm_o * 1e3, timed_o * 1e3);
  for (const auto& [name, k] : original.kernels) {
    if (selection.counts(k)) continue;
    auto now = candidate.kernels.find(name);
    const std::uint64_t launches = now == candidate.kernels.end() ? 0 : now->second.launches;
    if (launches != k.launches)
      return "kernel " + k.demangled + ", which is not timed, ran " + std::to_string(launches) +
             " times; the original ran it " + std::to_string(k.launches) + " times";
  }
  return {};
}

nlohmann::json to_json(const RunKernels& run, const KernelSelection& selection) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& [name, k] : run.kernels) {
    kernels.push_back({{"name", k.demangled},
                       {"launches", k.launches},
                       {"total_ns", k.total_ns},
                       {"streams", std::vector<std::uint32_t>(k.streams.begin(), k.streams.end())},
                       {"counted", selection.counts(k)}});
  }
  nlohmann::json transfers = nlohmann::json::object();
  for (const auto& [kind, t] : run.transfers) transfers[kind] = {{"count", t.count}, {"bytes", t.bytes}};
  return {{"kernels", kernels},       {"transfers", transfers}, {"dropped", run.dropped},
          {"processes", run.processes()}, {"complete", run.complete}};
}

}  // namespace maxcode
