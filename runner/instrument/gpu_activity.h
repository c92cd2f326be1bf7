// The GPU activity of one process: per kernel and launch shape, how often it ran and
// for how long; copies and memsets; how busy the GPU was.
//
// Shared by both sides of the GPU profiler: the CUPTI injection library
// (runner/inject/cupti_injection.cc) feeds activity records into a GpuActivity and
// writes its summary as JSON; the engine reads that file back with parse_gpu_summary.
// So this file needs nothing but the standard library and nlohmann/json, no CUDA
// headers. docs/profiling.md "GPU file" documents the JSON.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

namespace maxcode {

// One kernel execution, as a CONCURRENT_KERNEL record gives it.
struct KernelLaunch {
  std::string name;  // as the driver reports it: mangled for C++ kernels
  std::array<int, 3> grid{1, 1, 1};
  std::array<int, 3> block{1, 1, 1};
  int registers = 0;     // per thread
  int static_smem = 0;   // bytes per block
  int dynamic_smem = 0;  // bytes per block
  std::uint32_t device = 0;
  std::uint32_t stream = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  // Launched by a graph (or from the device) rather than by a launch call of the host:
  // such records have no launch call to be matched with.
  bool from_graph = false;
};

struct KernelStats {
  std::string name;
  std::array<int, 3> grid{1, 1, 1};
  std::array<int, 3> block{1, 1, 1};
  std::uint32_t device = 0;
  std::uint64_t launches = 0;
  std::uint64_t total_ns = 0;
  std::uint64_t min_ns = 0;
  std::uint64_t max_ns = 0;
  // The earliest launch, which kernel timing leaves out as warm-up (caches, TLBs and
  // clocks still cold).
  std::uint64_t first_start_ns = 0;
  std::uint64_t first_launch_ns = 0;
  int registers = 0;
  int static_smem = 0;
  int dynamic_smem = 0;
  std::vector<std::uint32_t> streams;  // sorted, distinct
};

struct TransferStats {
  std::string kind;  // "HtoD", "DtoH", "DtoD", ..., or "memset"
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
  std::uint64_t total_ns = 0;
};

// The driver calls of one process, counted by CUPTI callbacks as they return
// successfully: what the activity records must account for. A candidate that switches
// activity recording off around its real kernel, or starts a context or a process
// behind the timer's back, still makes these calls. Files without the counts (older
// versions) read as all zero, `counted` false.
struct ApiCalls {
  bool counted = false;               // the callbacks were subscribed and still are
  std::uint64_t launches = 0;         // kernel launch calls (not captured into a graph)
  std::uint64_t launch_records = 0;   // kernel records not launched by a graph
  std::uint64_t graph_launches = 0;   // cuGraphLaunch: kernels without a launch call each
  std::uint64_t contexts_created = 0; // cuCtxCreate*, cuGreenCtxCreate (not the primary context)
  std::map<std::string, std::uint64_t> ipc;  // "cuIpcOpenMemHandle" -> calls

  std::uint64_t ipc_calls() const;
  // Launches without a kernel record (0 when there are more records than launches).
  std::uint64_t unrecorded_launches() const;
};

// What one process's file says.
struct GpuSummary {
  long pid = 0;
  long ppid = 0;  // 0: not recorded (older files)
  std::string exe;
  bool complete = false;        // false: a snapshot taken while the program ran
  std::uint64_t first_ns = 0;   // start of the first activity (GPU clock)
  std::uint64_t last_ns = 0;    // end of the last
  std::uint64_t busy_ns = 0;    // union of kernel, copy and memset intervals
  bool busy_exact = true;       // false when too many intervals were kept to merge all
  std::uint64_t dropped = 0;    // records CUPTI could not deliver
  std::vector<KernelStats> kernels;
  std::vector<TransferStats> transfers;
  std::vector<std::string> messages;  // CUPTI errors met on the way
  ApiCalls api;

  std::uint64_t kernel_ns() const;
  std::uint64_t transfer_ns() const;
};

class GpuActivity {
 public:
  void add_kernel(const KernelLaunch& launch);
  void add_transfer(const std::string& kind, std::uint64_t bytes, std::uint64_t start_ns,
                    std::uint64_t end_ns);
  void add_dropped(std::uint64_t records) { dropped_ += records; }
  void add_message(const std::string& message);
  GpuSummary summary(long pid, const std::string& exe, bool complete) const;

  // Intervals kept for the busy-time union; beyond this the union is approximate.
  static constexpr std::size_t kMaxIntervals = 1u << 20;

 private:
  void add_interval(std::uint64_t start, std::uint64_t end);

  using KernelKey = std::tuple<std::string, std::array<int, 3>, std::array<int, 3>, std::uint32_t>;
  std::map<KernelKey, KernelStats> kernels_;
  std::map<std::string, TransferStats> transfers_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> intervals_;
  std::uint64_t overflow_ns_ = 0;  // durations past kMaxIntervals, added as if disjoint
  std::uint64_t first_ns_ = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t last_ns_ = 0;
  std::uint64_t dropped_ = 0;
  std::uint64_t launch_records_ = 0;  // kernels not from graphs: ApiCalls::launch_records
  std::vector<std::string> messages_;
};

// The file's "format": a reader refuses any other.
inline constexpr const char* kGpuSummaryFormat = "maxcode-gpu/1";

nlohmann::json to_json(const GpuSummary& summary);
// Strict (gpu_summary_read.cc): a missing or mistyped field, or a count that is not a
// whole number in range, throws std::runtime_error naming `label` and the field.
GpuSummary parse_gpu_summary(const nlohmann::json& document, const std::string& label);

}  // namespace maxcode
