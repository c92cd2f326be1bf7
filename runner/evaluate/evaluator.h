// The evaluator: build -> test -> output comparison -> timing, for one candidate at a
// time, against a baseline built once. docs/evaluation.md is its specification.
//
// Checking (materialize, build, test, compare) is safe to run for several candidates
// at once; timing is not, and the caller serializes it so that nothing else loads the
// machine while a stopwatch runs.
#pragma once

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "runner/core/candidate.h"
#include "runner/core/environment.h"
#include "runner/evaluate/audit.h"
#include "runner/evaluate/build_seal.h"
#include "runner/evaluate/call_records.h"
#include "runner/core/output_error.h"
#include "runner/util/error.h"
#include "runner/workspace/call_shim.h"
#include "runner/core/config.h"
#include "runner/core/evaluation.h"
#include "runner/evaluate/gpu/clock_monitor.h"
#include "runner/evaluate/gpu/devices.h"
#include "runner/evaluate/gpu/kernel_time.h"
#include "runner/evaluate/gpu/ncu.h"
#include "runner/evaluate/gpu/process_monitor.h"
#include "runner/evaluate/gpu/record_socket.h"
#include "runner/evaluate/gpu/witness.h"
#include "runner/evaluate/test_results.h"
#include "runner/workspace/knobs.h"
#include "runner/workspace/unit.h"
#include "runner/util/process.h"
#include "runner/util/progress.h"
#include "runner/workspace/source_extent.h"
#include "runner/core/target.h"
#include "runner/workspace/workspace.h"

namespace maxcode {

// The original code itself fails (does not build, fails its tests, prints output that
// changes from run to run): no candidate can be judged.
class SetupError : public Error {
 public:
  using Error::Error;
};

struct EvaluatorOptions {
  std::filesystem::path work_dir;    // workspaces are created here
  std::filesystem::path ccache_dir;  // shared by every build; empty = no ccache
  bool keep_workspaces = false;      // for debugging
  Environment env;                   // the GPUs it may time on, where the timing locks are
};

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

// A candidate turned into file contents, checked against the scope rule.
struct Materialized {
  Candidate candidate;
  std::map<std::string, std::string> files;  // relative path -> new content
  std::string source_hash;
  std::string rejection;  // non-empty: out of scope or unusable, with the reason
  std::string code;       // what to show of it: definition, diff, or knob settings
};

// A candidate that went through checking; its workspace lives until released.
struct Checked {
  Materialized materialized;
  Evaluation evaluation;
  std::filesystem::path workspace;
  // The candidate built with the call shim (call_check.cc), and its files: what the
  // wall-clock benchmarks that the shim covers are timed on. Empty when none.
  std::filesystem::path calls_workspace;
  std::map<std::string, std::string> calls_files;
  bool passed = false;  // ready for timing
  // The out-of-process witness's ncu run of this candidate, once made (at timing): the
  // kernels of each benchmark (empty for those not timed by kernel time); the
  // confirmation judges its own session against it without running ncu again.
  std::optional<std::vector<std::vector<NcuKernel>>> witness_ncu;
};

class Evaluator {
 public:
  // `unit` is the target's unit in its file (unit.h); its first function is the target.
  // `target` may be empty (no function chosen yet, as `maxcode init` checks the
  // original): then only prepare_baseline() and measure_noise() apply.
  Evaluator(const Config& config, const SourceSnapshot& source, const Target& target,
            const Unit& unit, std::vector<Knob> knobs, EvaluatorOptions options,
            Progress& progress);
  ~Evaluator();

  // Builds, tests and runs the original; keeps its outputs per seed as the reference.
  // Throws SetupError when the original cannot serve as one.
  void prepare_baseline();
  // An A/A session (baseline against itself); sets the noise floor used afterwards.
  Timing measure_noise();
  double noise_floor() const { return noise_floor_; }

  Materialized materialize(const Candidate& candidate) const;
  // Build, test and compare outputs. Thread-safe.
  Checked check(const Materialized& candidate);
  // How many candidates can be timed at once: one per GPU for GPU timing, else one.
  int timing_workers() const;
  // A/B timing against the baseline; sets the verdict. One at a time per worker; for
  // GPU timing, a would-be winner also goes through compute-sanitizer and the
  // out-of-process witness here (a rejection makes the verdict kRejected).
  void time(Checked& candidate, int worker = 0);
  // A fresh A/B session for a winner; the speedup to report. For GPU timing with
  // gpu.witness, a significant one then goes before the out-of-process witness
  // (gpu/witness.h): its record lands in the candidate's evaluation, and a disagreement
  // makes the verdict kRejected, the Timing not significant and its stop_reason
  // "rejected: <reason>".
  Timing confirm(Checked& candidate);
  // Nsight Compute metrics of the top kernels (GPU timing with gpu.ncu only); empty
  // when ncu is missing or fails (a warning says why). `checked` null: the original.
  std::vector<NcuKernel> ncu_metrics(const Checked* checked);
  const std::vector<NcuKernel>& baseline_ncu() const { return baseline_ncu_; }
  void release(Checked& candidate) noexcept;

  const std::vector<std::string>& warnings() const { return warnings_; }
  // The benchmark audit (one per benchmark), made by prepare_baseline.
  const std::vector<BenchmarkAudit>& audits() const { return audits_; }
  // The original's output per benchmark for the first seed ("" where not compared), and
  // the numbers in it that vary between runs (timings): made by prepare_baseline.
  std::vector<std::string> first_seed_outputs() const {
    std::vector<std::string> out;
    for (const auto& per_seed : reference_) out.push_back(per_seed.empty() ? "" : per_seed.front());
    return out;
  }
  const std::vector<std::vector<VaryingField>>& varying_fields() const { return varying_; }
  // The original unit's definitions, in file order (the target's alone for a unit of one).
  const std::string& baseline_definition() const { return baseline_definition_; }
  // What the test frameworks reported on the original's test run (test_results.h),
  // made by prepare_baseline; candidates' runs are held against it.
  const TestResults& original_tests() const { return original_tests_; }
  Isolation isolation() const;

 private:
  struct StepResult {
    Outcome outcome;
    // What went on behind the harness's back, if anything (each makes the step a
    // rejection): source files changed (workspace.h), build outputs changed since they
    // were sealed (build_seal.h), processes left running (leftover_processes.h).
    std::vector<std::string> sources;
    std::string outputs;       // describe() of the broken seal
    std::string left_running;  // "pid 7 (sleep)"
    // All of it in one line ("" when nothing): the source files as before, then
    // "build outputs ..." and "processes left running: ...".
    std::string tampered;
    // The reason for a rejection, `during` naming the step ("the tests"); "" when clean.
    std::string tampering(const std::string& during) const;
  };
  // One run of a benchmark on a GPU: the socket its processes report through (files in
  // `dir` only where no socket could be made), and the environment that says so.
  struct GpuRun {
    std::filesystem::path root;  // the workspace: `dir` is read beneath it (util/beneath.h)
    std::filesystem::path dir;
    std::vector<std::pair<std::string, std::string>> env;
    std::unique_ptr<RecordSocket> socket;
    std::vector<std::string> readable_paths;  // the socket's directory, read-only in the sandbox
  };
  // The state of one A/B session (several run at once, one per GPU).
  struct Session {
    std::mt19937_64 rng;
    const GpuDevice* device = nullptr;
    double child_s = 0;
    std::optional<ClockSample> clock;  // of the last run_suite
    nlohmann::json kernels;            // of the last run_suite: what ran, what counted
    // Per benchmark ("kernels" metric only): CUPTI's record of the last run_suite, and,
    // after an A/B session, of each side's last run (the witness compares them with ncu).
    std::vector<std::optional<RunKernels>> runs, baseline_runs, candidate_runs;
    // Per benchmark timed through the call shim: the round's perturbation key, and what
    // the last run_suite recorded (compared side against side after each round).
    std::uint64_t shim_key = 0;
    int shim_slot = 0;  // the two sides of a round keep their records apart (one workspace in an A/A)
    std::vector<std::optional<ShimRun>> shim_runs;
    // "google-benchmark" benchmarks: each entry's time per iteration in the last
    // run_suite, as (benchmark, entry) -> seconds, in the program's order.
    std::vector<std::pair<std::pair<std::string, std::string>, double>> entries;
  };
  // One side of a comparison: its plain build and, where the call shim is used, its
  // shimmed build.
  struct Side {
    const std::filesystem::path& workspace;
    const std::map<std::string, std::string>& files;
    const std::filesystem::path& calls_workspace;
    const std::map<std::string, std::string>& calls_files;
  };
  StepResult run_step(Evaluation& evaluation, const std::string& name, const std::string& command,
                      const std::filesystem::path& workspace, double timeout_s,
                      const std::map<std::string, std::string>& overrides,
                      std::vector<std::pair<std::string, std::string>> extra_env = {},
                      std::function<void(long pid)> started = {},
                      std::vector<std::string> readable_paths = {});
  bool build_and_test(Evaluation& evaluation, const std::filesystem::path& workspace,
                      const std::map<std::string, std::string>& overrides);
  // The ctest wrapper (test_results.h), once per evaluator; a warning where there is none.
  void prepare_test_tools();
  // The folder a workspace's test run writes its reports into, and the environment and
  // read-only paths that make the frameworks write there.
  std::filesystem::path test_results_dir(const std::filesystem::path& workspace) const;
  std::vector<std::pair<std::string, std::string>> test_env(const std::filesystem::path& results) const;
  // Reads what a test run reported (the original's: recorded; a candidate's: judged
  // against it). False with the verdict and reason set when the candidate's run fails.
  bool judge_tests(Evaluation& evaluation, const std::filesystem::path& workspace);
  bool compare_with_reference(Evaluation& evaluation, const std::filesystem::path& workspace,
                              const std::map<std::string, std::string>& overrides);
  // One timed run of every benchmark; returns total seconds, or a failure reason.
  double run_suite(Session& session, const Side& side, std::string& failure, Verdict& failure_verdict);
  Timing ab_session(Session& session, const std::string& label, const Side& candidate, std::string& failure,
                    Verdict& failure_verdict);
  Side baseline_side() const;
  static Side side_of(const Checked& checked);
  // GPU side: the environment of a benchmark run, and what it left behind.
  GpuRun gpu_run(const std::filesystem::path& workspace, const GpuDevice* device);
  // What the run's processes reported; throws std::runtime_error when the channel was
  // tampered with or a file is unreadable.
  RunKernels gpu_records(GpuRun& run);
  // Checks a run of benchmark `b` against the original's GPU activity and the
  // roofline; empty when it may be timed, else the reason it is rejected.
  // `original`: the original's run to hold it against (its shimmed run, for a shimmed
  // one: the shim's copies are on both sides); null: the original's plain run.
  // `alone`: the run held the GPU alone (a timed run, under the exclusive timing lock),
  // so its launch durations can be judged (gpu/launch_consistency.h).
  std::string check_gpu_run(std::size_t b, const RunKernels& run, double seconds, bool alone,
                            const RunKernels* original = nullptr) const;
  void prepare_gpu();
  // Called with the original's second run for seed 0 (`again`): fills varying_[b], or
  // throws SetupError when the runs differ in more than numbers at fixed places.
  void mask_varying_fields(std::size_t b, const std::string& again, Evaluation& e);
  std::string near_miss(const Comparison& c, std::size_t b) const;
  // The out-of-process witness of a confirmed winner (gpu_checks.cc).
  WitnessRecord witness(Checked& candidate, const Session& session, double claimed_speedup);
  // Every "kernels" benchmark once under ncu_duration_argv: its kernels, per benchmark
  // (empty for the others); nullopt with `problem` set when a run fails or its log
  // cannot be read.
  // A benchmark timed through the call shim is witnessed on the same shimmed build under
  // the shim (`side`'s calls workspace), so that ncu sees the launches CUPTI timed.
  std::optional<std::vector<std::vector<NcuKernel>>> ncu_witness_work(const Side& side, const GpuDevice* device,
                                                                      std::string& problem);
  // The fixed cost of starting a program in a timed run (sandbox shell, exec, loader),
  // from runs of /bin/true timed the same way; subtracted from CPU wall times so that
  // it does not compress large ratios (timing.cc).
  double measure_process_floor();
  // The call check (call_check.cc). Every wall-clock or kernel-timed benchmark whose calls of the
  // target the shim can see runs, checked and timed alike, on a build with the shim:
  // the original's at setup (the audit, the sizes of unsized outputs, its per-call
  // outputs), each candidate's before timing, and both sides in every timing round.
  struct CallBaseline {
    bool shimmed = false;             // timed through the shim
    std::string unverifiable;         // non-empty: no claim may rest on this benchmark, and why
    std::map<std::string, std::uint64_t> sizes;  // bytes of outputs found by the discovering run
    std::uint64_t cap = 1u << 20;     // bytes recorded per output and call
    ShimRun reference;                // the original's run with kReferenceKey
    // A benchmark timed by its kernels: the original's GPU activity under the shim
    // (reference.kernels), which shimmed runs of candidates are checked against.
  };
  void prepare_call_check();
  bool call_check(Evaluation& evaluation, Checked& checked);
  std::filesystem::path call_dir(const std::filesystem::path& workspace) const;
  // Writes the shim's `config` for a run of benchmark `b` with perturbation `key`.
  std::string prepare_shim_dir(const std::filesystem::path& ws, const std::filesystem::path& dir, std::size_t b,
                               std::uint64_t key, bool discover) const;
  // Why a shimmed run gave no records; `tampered`: it went behind the harness's back
  // (a rejection), else it failed or wrote records that cannot be read.
  struct ShimProblem {
    std::string reason;
    bool tampered = false;
  };
  // One run of benchmark `b` through the shim with perturbation `key` (0: none);
  // nullopt with `problem` set when it fails or its records cannot be read.
  std::optional<ShimRun> run_shimmed(Evaluation& evaluation, const std::filesystem::path& ws,
                                     const std::map<std::string, std::string>& overrides, std::size_t b,
                                     std::uint64_t key, bool discover, ShimProblem& problem,
                                     bool timed = false, double* wall_s = nullptr, int slot = -1,
                                     const GpuDevice* device = nullptr);
  // Empty when `got` (a candidate's run) matches `want` (the original's, same key) call
  // by call and in what it printed; else the reason.
  std::string compare_shim_runs(std::size_t b, const ShimRun& want, const ShimRun& got,
                                std::map<std::string, OutputError>* errors = nullptr) const;
  // Why no claim may rest on the wall-clock benchmarks this candidate was timed on;
  // empty when every one is verifiable.
  std::string unverifiable_reason() const;
  bool sanitize(Evaluation& evaluation, const std::filesystem::path& workspace,
                const std::map<std::string, std::string>& overrides, const GpuDevice* device);
  bool sanitize_with(Evaluation& evaluation, const std::filesystem::path& workspace,
                     const std::map<std::string, std::string>& overrides, const GpuDevice* device,
                     const std::string& sanitizer, const std::string& tool);
  std::vector<std::pair<std::string, std::string>> device_env(const GpuDevice* device) const;
  Session new_session(int worker);
  std::filesystem::path new_workspace_dir(const std::string& id);
  std::vector<std::pair<std::string, std::string>> base_env(const std::filesystem::path& ws) const;

  const Config& config_;
  const SourceSnapshot& source_;
  Target target_;
  Unit unit_;
  Extent extent_;  // the target's
  std::vector<Knob> knobs_;
  EvaluatorOptions options_;
  Progress& progress_;
  std::string original_file_;  // target file content
  std::string baseline_definition_;
  std::filesystem::path baseline_workspace_;
  // reference_[benchmark][seed index] = stdout of the original
  std::vector<std::vector<std::string>> reference_;
  // varying_[benchmark]: numbers its output prints that differ between two runs of the
  // original with one seed (timings), left out of every comparison of its output.
  std::vector<std::vector<VaryingField>> varying_;
  Tolerance output_tolerance(std::size_t b) const {
    return {config_.benchmarks[b].rtol, config_.benchmarks[b].atol, b < varying_.size() ? &varying_[b] : nullptr};
  }
  double noise_floor_ = 1.0;
  double process_floor_s_ = 0;  // per benchmark run; 0 until measure_noise()
  std::vector<std::string> warnings_;
  // The test frameworks' reports: the wrapper's folder (empty: no ctest wrapper) and
  // what the original's run reported.
  std::filesystem::path test_tools_dir_;
  TestResults original_tests_;
  // GPU timing (any benchmark with metric "kernels"):
  bool gpu_ = false;
  std::vector<GpuDevice> devices_;                 // one timing worker each
  std::string cupti_library_;                      // the injection library
  std::vector<std::optional<RunKernels>> original_runs_;  // per benchmark
  std::vector<KernelSelection> selections_;        // per benchmark
  std::vector<double> floors_;                     // per benchmark: roofline floor in s; 0 = none
  std::vector<NcuKernel> baseline_ncu_;
  // The witness's ncu run of the original, made at the first winner; or why it failed.
  std::optional<std::vector<std::vector<NcuKernel>>> witness_original_;
  std::string witness_original_problem_;
  bool witness_original_tried_ = false;
  std::mutex witness_mutex_;  // the original's run is made once, whichever worker needs it first
  double peak_bytes_per_s_ = 0, peak_flops_per_s_ = 0;
  std::vector<std::string> sanitizer_tools_;      // the tools the original passes
  std::atomic<long> gpu_run_counter_{0};
  // The call check: names baked into the shim (unguessable, so that candidate code
  // cannot look for them), the original's plan and records, the audit.
  std::string shim_tag_;
  std::uint64_t reference_key_ = 1;  // the perturbation of the call check (never 0: that is none)
  ShimPlan shim_plan_;
  std::string shim_library_;                                  // libmaxcode_shim.so, in the work directory
  std::filesystem::path shim_baseline_workspace_;             // the original built with the shim
  std::atomic<unsigned> shim_slot_{0};                        // alternates the records' directories
  std::map<std::string, std::string> shim_baseline_files_;
  std::vector<std::optional<CallBaseline>> call_baselines_;  // per benchmark
  std::vector<BenchmarkAudit> audits_;
  // The seal on each workspace's build outputs (build_seal.h), made by its build steps
  // and checked around every other step. Kept here, by workspace path, because every
  // step runs through run_step; dropped when the workspace is released.
  std::shared_ptr<const BuildSeal> seal_of(const std::filesystem::path& workspace);
  std::map<std::filesystem::path, std::shared_ptr<const BuildSeal>> seals_;  // guarded by mutex_
  std::mutex mutex_;
  std::mt19937_64 rng_;
  int workspace_counter_ = 0;
};

}  // namespace maxcode
