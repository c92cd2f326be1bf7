// A profile as maxcode reports it: two ranked lists (GPU kernels by share of GPU time,
// CPU functions by share of CPU time; a kernel fed slowly by the host stays at the top
// of its own list), how each benchmark ran, and whether the program is bound by the
// CPU, by kernel launches or by the GPU. `maxcode profile` writes it as profile.json (docs/profiling.md
// documents the fields); target selection reads the entries.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/instrument/gpu_activity.h"

namespace maxcode {

struct HotLine {
  std::string file;  // as the entry's file: repository-relative when inside it
  int line = 0;
  double share = 0;  // of the entry's self time
};

// A host function that launches a kernel, found at a launch site in the sources.
struct KernelLauncher {
  std::string function;   // qualified name: what --function takes
  std::string signature;  // its declaration, which tells overloads apart
  std::string file;       // repository-relative
  int line = 0;           // of the launch
};

struct ProfileEntry {
  std::string kind = "cpu";  // "cpu" | "gpu"
  std::string name;          // demangled, with parameters when known: for people
  std::string function;      // qualified name without parameters: what --function takes
  std::string symbol;        // mangled name when known
  std::string module;        // ELF object (CPU); the program's executable (GPU)
  std::string file;          // definition: repository-relative inside it, else as recorded
  int line = 0;
  double self = 0;           // self time (CPU) or kernel time (GPU), in Profile::unit
  double total = 0;          // inclusive time (CPU); equals self for kernels
  double share = 0;          // of its list's total: GPU time for kernels, CPU time for functions
  std::uint64_t calls = 0;   // kernel launches, or calls where the profiler counts them; 0 unknown
  std::uint64_t samples = 0; // CPU samples behind `self` (sampling profilers)
  bool external = false;     // library code: libc, libstdc++, cuBLAS, CUTLASS, ...
  bool in_scope = false;     // in the repository and inside the configured scope
  std::vector<HotLine> lines;        // hottest lines of its self time
  std::vector<KernelStats> shapes;   // GPU: per launch shape
  std::vector<KernelLauncher> launchers;  // GPU: host functions launching it by name
  std::string launch_note;  // GPU without launchers: why (through a pointer, not found)
  // CPU, Google Benchmark programs: per benchmark, the entries this function holds at
  // least 1% of the samples of (runner/profile/benchmark_entries.h); a target is timed
  // on these alone.
  std::map<std::string, std::vector<std::string>> benchmark_entries;
};

// One benchmark command run under the profilers.
struct BenchmarkRun {
  std::string name;
  std::string command;
  std::string outcome = "ok";  // "ok", or how it failed ("timed out after 5.0 s", ...)
  std::string output_tail;     // stderr/stdout tail when it failed
  double wall_s = 0;
  double cpu_s = 0;            // sampled processes' CPU time
  double gpu_kernel_s = 0;
  double gpu_transfer_s = 0;
  double gpu_busy_s = 0;       // union of all GPU activity
  double gpu_window_s = 0;     // from the first GPU activity to the last
  std::uint64_t kernel_launches = 0;
  std::string bound;           // "cpu-only", "cpu-bound", "launch-bound", "gpu-bound"
  std::string bound_reason;
  int processes = 0;           // sampler files read
  int gpu_processes = 0;       // GPU files read
  std::uint64_t samples = 0;
  std::uint64_t dropped = 0;      // CPU samples without room
  std::uint64_t gpu_dropped = 0;  // CUPTI records lost
  bool partial = false;           // some file was a snapshot or cut short
};

struct Profile {
  std::string unit = "ns";  // of self/total: "ns", or "Ir" / a perf event for imports
  double cpu_total = 0;     // all CPU self time
  double gpu_total = 0;     // all GPU time: kernels, copies, memsets
  std::vector<ProfileEntry> kernels;    // GPU kernels by share of GPU time, highest first
  std::vector<ProfileEntry> functions;  // CPU functions by share of CPU time, highest first
  std::vector<BenchmarkRun> runs;
  std::vector<std::string> warnings;
  std::string repository;
  std::string commit;

};

// The format tag of profile.json; the reader takes this one and maxcode-profile/1 (one
// mixed list, split here by kind).
inline constexpr const char* kProfileFormat = "maxcode-profile/2";

nlohmann::json to_json(const Profile& profile);

// Reads profile.json back. Throws std::runtime_error naming `label` and the field when
// the document is not a profile this version reads (an unknown format tag included).
Profile profile_from_json(const nlohmann::json& document, const std::string& label);

}  // namespace maxcode
