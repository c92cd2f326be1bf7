#include "runner/search.h"

#include <chrono>
#include <future>
#include <map>

namespace maxcode {

namespace {

double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

SearchResult run_search(Evaluator& evaluator, Policy& policy, const Target& target,
                        const SearchLimits& limits, Progress& progress,
                        const std::function<void(const TrajectoryEntry&)>& on_entry) {
  const auto start = std::chrono::steady_clock::now();
  SearchResult result;
  SearchState state;
  state.target = target;
  state.original_definition = evaluator.baseline_definition();
  std::optional<Checked> best;  // its workspace stays for the confirmation run
  std::map<std::string, std::string> seen;  // source hash -> first candidate id
  seen[evaluator.materialize(Candidate{"original", "original", {}, {}, {}, ""}).source_hash] =
      "the original";
  int step = 0;
  int idle_batches = 0;

  for (;;) {
    if (state.evaluations >= limits.max_evaluations) {
      result.stop_reason = "evaluation budget spent (" + std::to_string(limits.max_evaluations) + ")";
      break;
    }
    if (since(start) >= limits.max_wall_s) {
      result.stop_reason = "time budget spent";
      break;
    }
    const int want = std::min(limits.batch, limits.max_evaluations - state.evaluations);
    std::vector<Candidate> proposals = policy.propose(state, want);
    if (proposals.empty()) {
      result.stop_reason = "the " + policy.name() + " policy has nothing more to try";
      break;
    }
    ++step;

    // Duplicates (same resulting source) reuse the earlier verdict and cost nothing.
    std::vector<Materialized> fresh;
    std::vector<TrajectoryEntry> entries;
    for (const Candidate& candidate : proposals) {
      Materialized m = evaluator.materialize(candidate);
      auto dup = m.rejection.empty() ? seen.find(m.source_hash) : seen.end();
      if (dup != seen.end()) {
        Evaluation e;
        e.candidate_id = candidate.id;
        e.verdict = Verdict::kNotFaster;
        e.source_hash = m.source_hash;
        e.duplicate_of = dup->second;
        e.code = m.code;
        e.reason = "same code as " + dup->second + "; not evaluated again";
        for (const auto& earlier : state.trajectory)
          if (earlier.candidate.id == dup->second) {
            e = earlier.evaluation;
            e.candidate_id = candidate.id;
            e.duplicate_of = dup->second;
            e.reason = "same code as " + dup->second + ": " + earlier.evaluation.reason;
          }
        entries.push_back({step, candidate, e});
        continue;
      }
      if (m.rejection.empty()) seen[m.source_hash] = candidate.id;
      fresh.push_back(std::move(m));
    }
    idle_batches = fresh.empty() ? idle_batches + 1 : 0;
    if (idle_batches >= 20) {
      result.stop_reason = "the " + policy.name() + " policy keeps proposing code already evaluated";
      break;
    }

    // Checking (build, tests, outputs) in parallel; timing one at a time afterwards.
    progress.status("step " + std::to_string(step) + ": building and checking " +
                    std::to_string(fresh.size()) + " candidate(s)");
    std::vector<std::future<Checked>> futures;
    for (const Materialized& m : fresh)
      futures.push_back(std::async(std::launch::async, [&evaluator, &m] { return evaluator.check(m); }));
    std::vector<Checked> checked;
    for (auto& f : futures) checked.push_back(f.get());

    for (Checked& c : checked) {
      ++state.evaluations;
      progress.status("[" + std::to_string(state.evaluations) + "/" +
                      std::to_string(limits.max_evaluations) + "] " + c.evaluation.candidate_id);
      evaluator.time(c);
      const double reward = c.evaluation.reward();
      const bool new_best = reward > 0 && (!best || reward > best->evaluation.reward());
      progress.note("  " + c.evaluation.candidate_id + ": " + verdict_name(c.evaluation.verdict) +
                    " — " + c.evaluation.reason + (new_best ? "  (best so far)" : ""));
      entries.push_back({step, c.materialized.candidate, c.evaluation});
      if (new_best) {
        if (best) evaluator.release(*best);
        best = std::move(c);
      } else {
        evaluator.release(c);
      }
    }
    for (TrajectoryEntry& entry : entries) {
      state.trajectory.push_back(std::move(entry));
      if (best && state.trajectory.back().candidate.id == best->evaluation.candidate_id &&
          !state.trajectory.back().evaluation.duplicate_of)
        state.best = state.trajectory.size() - 1;
      on_entry(state.trajectory.back());
    }
  }

  if (best) {
    progress.status("confirming " + best->evaluation.candidate_id + " in a fresh A/B session");
    Timing confirmed = evaluator.confirm(*best);
    if (confirmed.significant) {
      result.winner = Winner{best->evaluation.candidate_id, confirmed, best->evaluation,
                             best->materialized.files};
    } else {
      char figure[160];
      std::snprintf(figure, sizeof figure, "%.3fx (95%% CI %.3f-%.3f)", confirmed.speedup.median,
                    confirmed.speedup.low, confirmed.speedup.high);
      result.unconfirmed = best->evaluation.candidate_id + " did not confirm: " +
                           (confirmed.stop_reason.rfind("failed", 0) == 0 ? confirmed.stop_reason
                                                                            : std::string(figure));
    }
    evaluator.release(*best);
  }
  result.trajectory = state.trajectory;
  result.evaluations = state.evaluations;
  result.wall_s = since(start);
  return result;
}

}  // namespace maxcode
