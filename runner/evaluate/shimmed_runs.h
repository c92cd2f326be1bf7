// The runs of the call check (call_check.h): one benchmark through the call shim
// (runner/inject/shim_runtime.cc loaded into it) with a perturbation, its records read
// back beneath its workspace, never through a link a run planted, and two runs held
// call by call.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/core/output_error.h"
#include "runner/evaluate/call_records.h"
#include "runner/evaluate/gpu/clock_monitor.h"
#include "runner/evaluate/gpu/process_monitor.h"
#include "runner/evaluate/gpu_runs.h"
#include "runner/evaluate/output_check.h"
#include "runner/evaluate/step_runner.h"

namespace maxcode {

// One run of a benchmark through the call shim: what the target's calls recorded and
// what the benchmark printed.
struct ShimRun {
  std::vector<CallRecord> records;
  std::string out;
  std::filesystem::path dir;  // where the records' out-*.bin files are
  // A benchmark timed by its kernels: CUPTI's record of the run (the shim's copies are
  // memcpy and memset activity, never kernel time), and, when it ran on a session's
  // device, the GPU processes seen and the clock.
  std::optional<RunKernels> kernels;
  GpuProcessCount gpu_processes;
  std::optional<ClockSample> clock;
  std::filesystem::path root;  // what the run could write (its workspace): the files are read beneath it
};

// Why a shimmed run gave no records; `tampered`: it went behind the harness's back (a
// rejection), else it failed or wrote records that cannot be read.
struct ShimProblem {
  std::string reason;
  bool tampered = false;
};

// How much of each output a run records: the sizes of outputs the signature does not
// give, found by the original's discovering run, and the bytes per output and call.
struct RecordLimits {
  std::map<std::string, std::uint64_t> sizes;
  std::uint64_t cap = 1u << 20;
};

// What a shimmed run is: which build, which perturbation, and how it is watched.
struct ShimRunSpec {
  ShimRunSpec(const std::filesystem::path& ws, const FileOverrides& files, std::size_t b, std::uint64_t perturbation)
      : workspace(ws), overrides(files), benchmark(b), key(perturbation) {}
  const std::filesystem::path& workspace;
  const FileOverrides& overrides;
  std::size_t benchmark;
  std::uint64_t key;      // the perturbation; 0: none
  bool discover = false;  // the original's first run: finds how far unsized outputs are written
  bool timed = false;     // a timed run (in a session's exclusive lock)
  int slot = -1;          // which records directory (timed runs: two per timing worker); -1: alternate 0 and 1
  const GpuDevice* device = nullptr;
  const RecordLimits* limits = nullptr;  // from the discovering run; null: the runtime's defaults
};

class ShimmedRuns {
 public:
  ShimmedRuns(EvaluationContext& context, StepRunner& steps, GpuRuns& gpu, const OutputCheck& outputs)
      : ctx_(context), steps_(steps), gpu_(gpu), outputs_(outputs) {}

  // Copies libmaxcode_shim.so into the work directory (shown read-only in the sandbox):
  // "" or why it cannot be.
  std::string prepare_library();
  // One run through the shim; nullopt with `problem` set when it fails or its records
  // cannot be read. `wall_s`: the parent's clock around the run.
  std::optional<ShimRun> run(Evaluation& e, const ShimRunSpec& spec, ShimProblem& problem, double* wall_s = nullptr);
  // Empty when `got` (a candidate's run) matches `want` (the original's, same key) call
  // by call and in what it printed; else the reason.
  std::string compare(std::size_t b, const ShimRun& want, const ShimRun& got,
                      std::map<std::string, OutputError>* errors = nullptr) const;
  // Clears the records' directory `dir` in `ws` and writes the runtime's config there:
  // "" or what made it impossible.
  std::string prepare_dir(const std::filesystem::path& ws, const std::filesystem::path& dir, std::uint64_t key,
                          bool discover, const RecordLimits* limits) const;
  std::filesystem::path call_dir(const std::filesystem::path& workspace) const;
  const std::string& library() const { return library_; }

 private:
  // The records a run wrote in `dir` and, for a kernel benchmark, what CUPTI saw.
  std::optional<ShimRun> read_run(const ShimRunSpec& spec, const std::string& label, const std::filesystem::path& dir,
                                  GpuRun& gpu, ShimRun run, ShimProblem& problem);

  EvaluationContext& ctx_;
  StepRunner& steps_;
  GpuRuns& gpu_;
  const OutputCheck& outputs_;
  std::string library_;            // libmaxcode_shim.so, in the work directory
  std::atomic<unsigned> slot_{0};  // alternates the records' directories
};

}  // namespace maxcode
