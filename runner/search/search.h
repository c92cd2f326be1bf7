// The search loop of docs/method.md: propose k, rerank to n, check the n in
// parallel, time the survivors one at a time, critique each attempt, keep the best so
// far, checkpoint, and finally confirm the best in a fresh A/B session. The confirmed
// figure is the result.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runner/core/config.h"
#include "runner/search/critic.h"
#include "runner/evaluate/evaluator.h"
#include "runner/search/policy.h"
#include "runner/util/progress.h"
#include "runner/search/reranker.h"
#include "runner/search/spend.h"

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
  std::optional<std::string> fatal;  // an error that stopped the run (e.g. a rejected API key)
  bool stopped = false;  // hooks.stop_requested ended it: resumable, not confirmed
  int evaluations = 0;  // candidates checked (duplicates excluded)
  double wall_s = 0;
  nlohmann::json spend;  // Spend::to_json at the end
};

struct SearchLimits {
  int max_evaluations = 32;
  int batch = 4;       // n: candidates evaluated per step
  int proposals = 4;   // k: proposed per step; the reranker keeps the best n
  double max_wall_s = 3600;
  long max_tokens = 0;     // 0: no limit
  double max_dollars = 0;  // 0: no limit
  double max_timing_s = 0; // seconds of A/B timing (GPU-seconds on a GPU); 0: no limit
};

struct SearchHooks {
  Critic* critic = nullptr;      // none: attempts are not critiqued
  Reranker* reranker = nullptr;  // none: the first n proposals are evaluated
  Spend* spend = nullptr;        // required when a budget in tokens or dollars is set
  // Each trajectory entry as soon as it is final (trajectory.jsonl, the rollout store).
  std::function<void(const TrajectoryEntry&)> on_entry;
  // After every step, with the state to resume from (checkpoints).
  std::function<void(const SearchState&)> on_step;
  // Asked before every step: true stops the search there (SIGTERM), keeping what it has
  // and skipping the confirmation run; a resumed search confirms later.
  std::function<bool()> stop_requested;
};

// The confirmation of a search's best candidate (or of the one candidate `maxcode eval`
// judges), written once: a fresh A/B session, then for GPU timing the winner's Nsight
// Compute metrics and the traffic floor (gpu/traffic_floor.h). Sets result.winner, or
// result.unconfirmed with the reason; a rejection at confirmation (the out-of-process
// witness, the traffic floor) marks the candidate's entries in `trajectory` rejected.
void confirm_winner(Evaluator& evaluator, Checked& best, std::vector<TrajectoryEntry>& trajectory, SearchResult& result,
                    Progress& progress);

// `resume_from`: the state of an earlier, interrupted run of the same search.
SearchResult run_search(Evaluator& evaluator, Policy& policy, const Target& target, const SearchLimits& limits,
                        Progress& progress, const SearchHooks& hooks,
                        const SearchState* resume_from = nullptr);

}  // namespace maxcode
