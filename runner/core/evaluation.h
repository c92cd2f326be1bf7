// Evaluation: everything the evaluator learned about one candidate — the verdict and
// the evidence behind it. A critic (rule-based or LLM) reads only this record, so it
// carries compiler errors, failing test output, the first differing values and the
// timing statistics.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/core/output_error.h"
#include "runner/core/witness_record.h"
#include "runner/util/stats.h"

namespace maxcode {

enum class Verdict {
  kFaster,        // correct, and the speedup's lower bound clears the threshold and noise
  kNotFaster,     // correct, not significantly faster
  kIncorrect,     // output differed from the baseline's
  kCompileError,  // configure or build failed
  kTestFailed,    // the project's test command failed
  kTimeout,       // a step ran past its time limit
  kCrashed,       // a benchmark died (signal, non-zero exit, output flood)
  kLimit,         // a step ran into a limit on what one command may take (memory of all its
                  // processes, processes at once, CPU time, disk): the reason names it and the
                  // setting (workspace.max_memory_mb, ...)
  kRejected,      // out of scope, protected files touched, or unusable candidate
  kUnverifiable,  // correct where checked and timed faster, but on a benchmark where a cache or
                  // skipped work could not have been seen: no claim is made
};
const char* verdict_name(Verdict verdict);

// One child process the evaluator ran for this candidate.
struct StepRecord {
  std::string name;     // "configure", "build", "test", "check main seed=1", "timing"
  std::string command;
  std::string status;   // Outcome::describe(): "exit code 0", "timed out after 5.0 s"
  double wall_s = 0;
  std::string output_tail;  // last part of stderr+stdout when the step failed
};

struct Timing {
  std::vector<double> baseline_s;   // per round: total wall time of all benchmarks
  std::vector<double> candidate_s;
  RatioInterval speedup;            // median of per-round ratios and its 95% interval (util/stats.h)
  double baseline_median_s = 0;
  double candidate_median_s = 0;
  double noise_floor = 1;           // from the A/A session
  double min_speedup = 1.05;
  bool significant = false;
  std::string stop_reason;          // "interval narrow", "max rounds", "time cap"
  bool drifted = false;             // the halves of the session disagreed (ratios_drifted)
  double process_floor_s = 0;       // subtracted from each CPU benchmark run's wall time
  // Wall seconds the whole session held the machine (both sides, warm-up included): what
  // search.max_timing_s and a job's gpu_s count. The rounds' figures are the metric's,
  // which for a Google Benchmark program are times per iteration, not seconds spent.
  double session_s = 0;
  // GPU timing ("kernels" metric) only:
  std::string device;                      // the GPU both sides ran on
  double lock_wait_s = 0;                  // waited for the GPU's timing lock (not in session_s)
  std::vector<unsigned> baseline_sm_mhz;   // per round: SM clock under load; 0 = unknown
  std::vector<unsigned> candidate_sm_mhz;
  std::vector<bool> throttled;             // per round: the GPU held its clock down
  double roofline_floor_s = 0;             // the least time the counted work can take; 0 = unknown
  // Google Benchmark programs ("google-benchmark" metric): each entry timed, with its
  // median time per iteration on each side over the rounds: which entries moved.
  struct Entry {
    std::string benchmark;
    std::string name;
    double baseline_median_s = 0;
    double candidate_median_s = 0;
  };
  std::vector<Entry> entries;
  // Per round, each side's CPU pressure: the part of its timed run during which some task
  // on the machine waited for a CPU (util/cpu_pressure.h); empty where the kernel does
  // not say. A contended round's wall-time ratio reads high: the longer run is preempted
  // more.
  std::vector<double> baseline_cpu_pressure;
  std::vector<double> candidate_cpu_pressure;
  int throttled_rounds() const;
  // Rounds in which either side's run spent more than kContendedPressure of its time
  // with some task waiting for a CPU.
  static constexpr double kContendedPressure = 0.10;
  int contended_rounds() const;
  // A sentence for people when some rounds were contended (report and PR body); "" else.
  std::string contention_note() const;
};

struct Evaluation {
  std::string candidate_id;
  Verdict verdict = Verdict::kRejected;
  std::string reason;               // one line: why this verdict
  std::string source_hash;          // of the materialized target file(s); for dedupe
  std::optional<std::string> duplicate_of;  // id of an earlier identical candidate
  std::vector<StepRecord> steps;
  std::string compiler_output;      // on compile errors
  std::string test_output;          // on test failures
  std::string mismatch;             // on incorrect output: Comparison::summary()
  std::optional<Timing> timing;
  std::string isolation;            // how candidate code ran ("bubblewrap", ...)
  double wall_s = 0;                // evaluator's time on this candidate
  double child_s = 0;               // time spent in child processes
  std::string code;                 // the target definition as evaluated (for reports, critiques)
  std::string critique;             // natural-language diagnosis of this attempt
  std::string critic;               // who wrote it: "metrics" or "llm <model>"
  // GPU facts (docs/result-format.md "gpu"): "resources" (-Xptxas -v per kernel),
  // "kernels" (what a timed run launched and what was counted), "sanitizer", "ncu".
  nlohmann::json gpu = nlohmann::json::object();
  // What the test frameworks reported for this run (docs/result-format.md "tests",
  // runner/evaluate/test_results.h); empty when the test step did not get that far.
  nlohmann::json tests = nlohmann::json::object();
  // The call check (docs/evaluation.md "Ordinary benchmarks"): what it found, one line;
  // empty when it did not run.
  std::string call_check;
  // Per output, how far this candidate's values lie from the original's.
  std::vector<OutputError> precision;
  // The out-of-process witness (GPU winners only): what ncu saw against CUPTI.
  std::optional<WitnessRecord> witness;

  double reward() const {  // the max-reward objective: speedup if faster, else 0
    return verdict == Verdict::kFaster && timing ? timing->speedup.median : 0.0;
  }
};

nlohmann::json to_json(const RatioInterval& interval);
nlohmann::json to_json(const Timing& timing);
nlohmann::json to_json(const Evaluation& evaluation);

// Readers of the JSON forms above (checkpoints are read back with them).
Verdict verdict_from_name(const std::string& name);
RatioInterval interval_from_json(const nlohmann::json& j);
Timing timing_from_json(const nlohmann::json& j);
Evaluation evaluation_from_json(const nlohmann::json& j);

}  // namespace maxcode
