// RunResult: what one run of `maxcode optimize` or `maxcode eval` found, in the shape of
// its result.json (docs/result-format.md). The report writes it and the bot reads it
// back (delivery, the PR body, the service's job summaries) through the one pair of
// functions below, so the file has one shape and its readers hold typed values.
//
// Parts that are open records by design stay JSON: `environment` (facts of the machine,
// keyed by name), `settings` (the acceptance settings as the run used them), `spend`,
// and the GPU and test-framework facts (docs/result-format.md "gpu", "tests").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/core/benchmark_audit.h"
#include "runner/core/evaluation.h"
#include "runner/core/target.h"
#include "runner/util/error.h"

namespace maxcode {

inline constexpr const char* kResultSchema = "maxcode.result/1";

// result.json that cannot be read: what is wrong and where ("result.json: winner.confirmation:
// missing required field").
class RunResultError : public Error {
 public:
  using Error::Error;
};

struct ResultRepository {
  std::string path;
  std::string commit;                      // the commit the run started from; empty outside git
  std::vector<std::string> local_changes;  // uncommitted changes the run included
};

// One entry of result.candidates: the evaluation and where the candidate came from.
struct ResultCandidate {
  int step = 0;
  std::string origin;
  nlohmann::json knobs = nlohmann::json::object();  // tune: the knob values; empty otherwise
  std::string note;
  Evaluation evaluation;
};

// The confirmed winner: the fresh A/B session against the original, and what the
// search's evaluation of the same candidate found.
struct ResultWinner {
  std::string id;
  Timing confirmed;  // the number to report: speedup, medians, rounds, noise floor
  std::optional<RatioInterval> search_speedup;
  nlohmann::json gpu = nlohmann::json::object();
  std::vector<OutputError> precision;
  std::string call_check;
  std::optional<WitnessRecord> witness;
  nlohmann::json tests = nlohmann::json::object();
};

struct RunResult {
  std::string command;  // "optimize" | "eval"
  ResultRepository repository;
  Target target;
  std::string policy;
  nlohmann::json environment = nlohmann::json::object();
  nlohmann::json settings = nlohmann::json::object();
  std::optional<Timing> noise;  // the A/A session
  std::vector<ResultCandidate> candidates;
  std::optional<ResultWinner> winner;
  std::optional<std::string> unconfirmed;  // the best candidate's confirmation failed: why
  std::optional<std::string> fatal;        // an error stopped the run
  std::string stop_reason;
  int evaluations = 0;
  std::vector<std::string> warnings;
  std::vector<BenchmarkAudit> audit;
  std::string started_at;
  double wall_s = 0;
  nlohmann::json spend;  // null: not counted
  nlohmann::json gpu;    // null: not a GPU run
  nlohmann::json tests = nlohmann::json::object();

  // The candidate of this id in `candidates`; null when there is none.
  const ResultCandidate* candidate(const std::string& id) const;
  // environment.<key> when it is a string, else "".
  std::string environment_text(const std::string& key) const;
};

nlohmann::json to_json(const RunResult& result);

// Reads what to_json wrote. Fields may be absent (they keep their defaults) except the
// schema and target.file and target.function; a field of the wrong type is an error.
// Throws RunResultError naming `label` and the field's path.
RunResult run_result_from_json(const nlohmann::json& j, const std::string& label = "result.json");

}  // namespace maxcode
