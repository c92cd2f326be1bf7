// Kernel time: the "kernels" timing metric, read from the CUPTI injection's files
// (runner/inject/cupti_injection.cc) that one run of a benchmark left behind.
//
// Which kernels count: those whose demangled name matches the benchmark's `kernels`
// patterns (all when none are given), and every kernel the original never launched,
// so that work moved into a new helper kernel is never left out. Launches on every
// stream count (docs/evaluation.md "GPU timing": CUDA events on one stream can be fooled by work on another).
// Kernel durations are summed, not merged, so overlapping work is never free.
//
// What the metric cannot see — copies, memsets and host work — is compared with the
// original instead (check_against_baseline): a candidate that does its work there is
// rejected rather than timed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/instrument/gpu_activity.h"

namespace maxcode {

struct KernelTotals {
  std::string name;        // mangled, as the driver reports it
  std::string demangled;
  std::uint64_t launches = 0;
  std::uint64_t total_ns = 0;
  std::uint64_t first_launch_ns = 0;  // duration of the earliest launch
  std::uint64_t min_ns = 0;           // shortest and longest launch
  std::uint64_t max_ns = 0;
  std::uint64_t first_start_ns = 0;
  std::set<std::uint32_t> streams;
};

// One process of a run, from its file: who it was and the driver calls it made.
struct ProcessCalls {
  long pid = 0;   // as the process saw itself (inside the sandbox's pid namespace)
  long ppid = 0;
  std::string exe;
  bool complete = true;
  std::uint64_t dropped = 0;
  ApiCalls api;
};

// What one run of a benchmark did on the GPU, all its processes together.
struct RunKernels {
  std::map<std::string, KernelTotals> kernels;        // by mangled name
  std::map<std::string, TransferStats> transfers;     // by kind: "HtoD", "memset", ...
  std::uint64_t dropped = 0;                           // records CUPTI lost
  std::vector<std::string> messages;                   // CUPTI errors
  bool complete = true;                                // every process reached its exit
  std::vector<ProcessCalls> calls;                     // one per process summary, in order read
  int processes() const { return static_cast<int>(calls.size()); }
};

// Adds one process's summary to the run.
void add_summary(RunKernels& run, const GpuSummary& summary);
// Reads every gpu-*.json in `dir`, beneath `root` (default: `dir` itself), the directory
// the run could write: a link there, or on the way, is an error, never followed
// (util/beneath.h). Throws std::runtime_error on an unreadable file.
RunKernels read_run_kernels(const std::filesystem::path& dir, const std::filesystem::path& root = {});

class KernelSelection {
 public:
  // `patterns`: regexes searched in demangled names (empty: every kernel);
  // `original`: kernel names the original launched (empty: not known yet).
  KernelSelection(const std::vector<std::string>& patterns, std::set<std::string> original,
                  int warmup_launches);
  bool counts(const KernelTotals& kernel) const;
  // Sum of counted launch durations, the warm-up left out (only the earliest launch of
  // a kernel is known individually; further ones at their mean).
  double seconds(const RunKernels& run) const;
  // The counted launches' time left out as warm-up.
  double warmup_seconds(const RunKernels& run) const;
  std::uint64_t counted_launches(const RunKernels& run) const;
  std::uint64_t counted_launches_all(const RunKernels& run) const;  // warm-up included

  // How many launches of each counted kernel are warm-up. The first `warmup_launches`
  // of each kernel, but once the original is known, no more in all than the original
  // left out (its counted kernels times `warmup_launches`), taken in order of first
  // launch: warm-up is a budget of the run, not a right of every kernel name, so a
  // candidate that launches each call's work under a new name (a new template
  // instance per call) has that work counted, not dropped as warm-up. By mangled name;
  // the witness (witness.h) leaves out the same launches of ncu's.
  std::map<std::string, std::uint64_t> warmup(const RunKernels& run) const;

 private:
  std::vector<std::regex> patterns_;
  std::set<std::string> original_;
  int warmup_launches_;
  std::uint64_t warmup_budget_ = 0;  // 0 with no original: every kernel its own warm-up
};

// A candidate run compared with the original's: empty when nothing escapes the metric,
// otherwise why it is rejected. Checks: no counted kernel ran where the original ran
// some; more bytes moved by copies or memsets of some kind (work done on the host or by
// the copy engines is not kernel time); a kernel outside the counted set launched a
// different number of times (work hidden under an uncounted name); more of the counted
// kernels' time left out as warm-up than counted, where the original's warm-up was the
// smaller part (work hidden in launches that are not timed).
std::string check_against_baseline(const RunKernels& original, const RunKernels& candidate,
                                   const KernelSelection& selection);

nlohmann::json to_json(const RunKernels& run, const KernelSelection& selection);

}  // namespace maxcode
