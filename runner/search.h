// The search loop of DESIGN.md "The method", without the learned parts: propose a batch,
// check it in parallel, time the survivors one at a time, keep the best so far, and
// finally confirm the best in a fresh A/B session. The confirmed figure is the result.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runner/config.h"
#include "runner/evaluator.h"
#include "runner/policy.h"
#include "runner/progress.h"

namespace maxcode {

struct Winner {
  std::string id;
  Timing confirmed;        // the fresh A/B session: the number to report
  Evaluation evaluation;   // from the search
  std::map<std::string, std::string> files;  // new contents of changed files
};

struct SearchResult {
  std::vector<TrajectoryEntry> trajectory;
  std::optional<Winner> winner;
  std::optional<std::string> unconfirmed;  // best candidate whose confirmation failed, and why
  std::string stop_reason;
  int evaluations = 0;  // candidates checked (duplicates excluded)
  double wall_s = 0;
};

struct SearchLimits {
  int max_evaluations = 32;
  int batch = 4;
  double max_wall_s = 3600;
};

// `on_entry` sees each trajectory entry as soon as it is final (for trajectory.jsonl).
SearchResult run_search(Evaluator& evaluator, Policy& policy, const Target& target,
                        const SearchLimits& limits, Progress& progress,
                        const std::function<void(const TrajectoryEntry&)>& on_entry);

}  // namespace maxcode
