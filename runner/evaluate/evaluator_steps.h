// Small text helpers the evaluator's step files share (evaluator.cc, check.cc, ...).
// Internal to runner/evaluate/.
#pragma once

#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "runner/core/evaluation.h"
#include "runner/util/process.h"
#include "runner/util/format.h"

namespace maxcode::evaluator_steps {

inline constexpr std::size_t kFeedbackBytes = 8000;

inline std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

// Verdict for a step that did not succeed: running out of time is always `timeout`;
// anything else is the step's own failure kind.
inline Verdict failure_verdict(const Outcome& outcome, Verdict otherwise) {
  return outcome.timed_out ? Verdict::kTimeout : otherwise;
}

// Where a "google-benchmark" run writes its JSON: inside the workspace (the only place a
// sandboxed run may write), under a name that changes with every run.
inline std::filesystem::path google_benchmark_file(const std::filesystem::path& workspace, const std::string& tag,
                                                   long run) {
  return workspace / (".maxcode-gbench-" + tag) / ("run-" + std::to_string(run) + ".json");
}

inline std::string seconds(double s) { return format_numbers("%.3f s", s); }

}  // namespace maxcode::evaluator_steps
