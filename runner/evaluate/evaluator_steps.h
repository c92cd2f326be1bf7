// Small text helpers the evaluator's strategy files share. Internal to runner/evaluate/.
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

// Verdict for a step that did not succeed: a limit on what a command may take is always
// `limit` (even where a timeout or a crash followed from it), running out of time is
// always `timeout`; anything else is the step's own failure kind.
inline Verdict failure_verdict(const Outcome& outcome, Verdict otherwise) {
  if (!outcome.limit_exceeded.empty()) return Verdict::kLimit;
  return outcome.timed_out ? Verdict::kTimeout : otherwise;
}

// The same from a step's record (StepRecord::status, Outcome::describe()), where the
// outcome itself is gone (the call shim's runs).
inline Verdict failure_verdict(const StepRecord& step, Verdict otherwise) {
  if (step.status.rfind("stopped: ", 0) == 0) return Verdict::kLimit;
  return step.status.find("timed out") != std::string::npos ? Verdict::kTimeout : otherwise;
}

// Where a "google-benchmark" run writes its JSON: inside the workspace (the only place a
// sandboxed run may write), under a name that changes with every run.
inline std::filesystem::path google_benchmark_file(const std::filesystem::path& workspace, const std::string& tag,
                                                   long run) {
  return workspace / (".maxcode-gbench-" + tag) / ("run-" + std::to_string(run) + ".json");
}

inline std::string seconds(double s) { return format_numbers("%.3f s", s); }

}  // namespace maxcode::evaluator_steps
