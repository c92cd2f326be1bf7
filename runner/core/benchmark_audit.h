// BenchmarkAudit: what one of the project's benchmarks can and cannot catch, as the
// audit at setup found it (runner/evaluate/audit.h), and what maxcode checks on its own
// for each weakness. Carried into result.json ("audit"), the reports and the PR.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace maxcode {

struct BenchmarkAudit {
  std::string benchmark;
  std::optional<bool> seed_changes_output;   // unknown when the output is not compared
  std::optional<bool> input_changes_output;  // unknown without a perturb run
  std::size_t printed_numbers = 0;
  bool summary_only = false;
  long calls = 0;                          // calls of the target in one run; 0 = none seen
  std::optional<bool> inputs_reused;       // same buffers with the same contents every call
  std::optional<bool> outputs_unpoisoned;  // each call finds the last call's output in place
  std::string interface;                   // "described", "inferred", "none"
  std::string call_check;                  // what the evaluation adds ("" = no call check), or why not
  std::vector<std::string> findings;       // sentences, the weaknesses first
};

nlohmann::json to_json(const BenchmarkAudit& audit);
// Reads what to_json wrote; absent fields keep their defaults. Throws
// nlohmann::json::exception on a field of the wrong type.
BenchmarkAudit benchmark_audit_from_json(const nlohmann::json& j);

}  // namespace maxcode
