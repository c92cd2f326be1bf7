// The third check, and the runs it makes (call_shim.h, runner/inject/shim_runtime.cc).
//
// Every benchmark timed by the wall clock or by its kernels whose calls of the target the
// shim can see is run, checked and timed alike, on a build of each side with the shim:
// the original's at setup (the benchmark audit, the sizes of outputs the signature does
// not give, its per-call outputs with the reference perturbation), each candidate's
// before timing (rejected when its per-call times show a cache or skipped calls, or when
// any call's output differs from the original's on the same perturbed inputs), and both
// sides in every timing round, with a perturbation drawn for that round
// (timing/shimmed_clock.cc). Where no output can be compared per call, or the inputs
// cannot be changed between calls, no claim may rest on the benchmark: the verdict is
// "unverifiable", with what to add. A GPU host launcher's pointer arguments are device
// memory: the runtime sizes them by their allocation and copies them through the host;
// its runs are timed by CUPTI's kernel records, held against the original's shimmed run.
// Where the check cannot be made on a GPU benchmark, it keeps the GPU defences it had
// before the shim reached it (per-launch consistency, the launch audit, the witness),
// with a warning.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/core/output_error.h"
#include "runner/evaluate/audit.h"
#include "runner/evaluate/call_records.h"
#include "runner/evaluate/checked.h"
#include "runner/evaluate/gpu_runs.h"
#include "runner/evaluate/output_check.h"
#include "runner/evaluate/shimmed_runs.h"
#include "runner/evaluate/step_runner.h"
#include "runner/workspace/call_shim.h"

namespace maxcode {

// How one benchmark is held to the call check, made from the original at setup.
struct CallBaseline {
  bool shimmed = false;      // timed through the shim
  std::string unverifiable;  // non-empty: no claim may rest on this benchmark, and why
  RecordLimits limits;       // found by the discovering run
  ShimRun reference;         // the original's run with the reference key
};

class CallCheck : public CandidateCheck {
 public:
  CallCheck(EvaluationContext& context, StepRunner& steps, GpuRuns& gpu, const OutputCheck& outputs)
      : ctx_(context), steps_(steps), gpu_(gpu), outputs_(outputs), runs_(context, steps, gpu, outputs) {}

  // The original built with the shim and run through it, per benchmark; the audits.
  void prepare();
  bool check(Checked& candidate) override;

  // A run through the shim with benchmark `b`'s record limits (ShimmedRuns::run).
  std::optional<ShimRun> run(Evaluation& e, ShimRunSpec spec, ShimProblem& problem, double* wall_s = nullptr);
  std::string compare(std::size_t b, const ShimRun& want, const ShimRun& got,
                      std::map<std::string, OutputError>* errors = nullptr) const {
    return runs_.compare(b, want, got, errors);
  }
  // Why no claim may rest on the benchmarks this candidate was timed on; empty when
  // every one is verifiable.
  std::string unverifiable_reason() const;
  // The benchmark `b` is timed through the shim; its baseline.
  bool shimmed(std::size_t b) const { return b < baselines_.size() && baselines_[b] && baselines_[b]->shimmed; }
  const CallBaseline& baseline(std::size_t b) const { return *baselines_.at(b); }
  // The witness runs a shimmed build under ncu: the records' directory, prepared as for
  // a run of benchmark `b`, and the library to preload.
  std::string prepare_dir(const std::filesystem::path& ws, const std::filesystem::path& dir, std::size_t b,
                          std::uint64_t key) const;
  std::filesystem::path call_dir(const std::filesystem::path& workspace) const { return runs_.call_dir(workspace); }
  const std::string& shim_library() const { return runs_.library(); }
  // The original built with the shim, and its files (empty when no benchmark is shimmed).
  const std::filesystem::path& original_workspace() const { return workspace_; }
  const FileOverrides& original_files() const { return files_; }
  const std::vector<BenchmarkAudit>& audits() const { return audits_; }

 private:
  // Plans the shim and builds the original with it; "" or why it cannot be.
  std::string build_original(Evaluation& e, bool any);
  // The call baseline of benchmark `b`, filling what the audit needs into `in`.
  void prepare_benchmark(Evaluation& e, std::size_t b, AuditInputs& in);
  // The reference perturbation, twice, kept apart from the workspace: the original must
  // reproduce its own per-call outputs, or nothing can be held against them.
  void prepare_reference(Evaluation& e, std::size_t b, CallBaseline& baseline, AuditInputs& in);
  ShimRun keep_reference(std::size_t b, ShimRun reference);
  bool rebuild_candidate(Evaluation& e, const std::filesystem::path& ws, const FileOverrides& overrides);
  bool check_benchmark(Evaluation& e, std::size_t b, const std::filesystem::path& ws, const FileOverrides& overrides,
                       std::map<std::string, OutputError>& errors, std::vector<std::string>& summary);

  EvaluationContext& ctx_;
  StepRunner& steps_;
  GpuRuns& gpu_;
  const OutputCheck& outputs_;
  ShimmedRuns runs_;
  ShimPlan plan_;
  std::filesystem::path workspace_;
  FileOverrides files_;
  std::vector<std::optional<CallBaseline>> baselines_;  // per benchmark
  std::vector<BenchmarkAudit> audits_;
};

}  // namespace maxcode
