// The outputs of a run: result.json for programs, report.md for people, patch.diff for
// `git apply`. trajectory.jsonl is written as the search goes (see search.h).
// docs/result-format.md documents result.json; keep the two in step.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/core/benchmark_audit.h"
#include "runner/core/run_result.h"
#include "runner/core/target.h"
#include "runner/search/search.h"

namespace maxcode {

struct RunInfo {
  std::string command;  // "optimize" | "eval"
  std::string repository;
  std::string commit;
  std::vector<std::string> local_changes;
  Target target;
  std::string policy;
  nlohmann::json environment;
  nlohmann::json settings;  // acceptance settings the verdicts used
  std::vector<std::string> warnings;
  std::optional<Timing> noise;  // the A/A session
  std::vector<BenchmarkAudit> audit;  // the benchmark audit, one per benchmark
  // What the test frameworks reported on the original's test run (docs/result-format.md
  // "tests"); empty when unknown.
  nlohmann::json tests = nlohmann::json::object();
  nlohmann::json gpu;           // GPU timing only: {"baseline_ncu": [...]} (docs/result-format.md)
  std::string started_at;
  double wall_s = 0;
};

// The run as result.json holds it (runner/core/run_result.h), and that JSON.
RunResult run_result(const RunInfo& info, const SearchResult& result);
nlohmann::json result_to_json(const RunInfo& info, const SearchResult& result);
std::string render_report(const RunInfo& info, const SearchResult& result, const std::string& patch);

// Writes result.json, report.md, report.html and (with a winner) patch.diff into `out`.
void write_outputs(const std::filesystem::path& out, const RunInfo& info,
                   const SearchResult& result, const std::string& patch);

// One trajectory line: the entry with the best-so-far after it.
nlohmann::json trajectory_line(const TrajectoryEntry& entry);

}  // namespace maxcode
