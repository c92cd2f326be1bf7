#include "runner/search.h"

#include <chrono>
#include <future>
#include <map>

namespace maxcode {

namespace {

double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A duplicate takes the verdict of the candidate it repeats (earlier, or in its own
// batch), without the timing: it was not measured again.
void resolve_duplicate(Evaluation& e, const std::vector<TrajectoryEntry>& earlier,
                       const std::vector<TrajectoryEntry>& batch) {
  for (const auto* list : {&earlier, &batch})
    for (const TrajectoryEntry& other : *list)
      if (other.candidate.id == *e.duplicate_of && !other.evaluation.duplicate_of) {
        e.verdict = other.evaluation.verdict;
        e.reason = "same code as " + other.candidate.id + ": " + other.evaluation.reason;
        return;
      }
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
    // Entries keep the order of the proposals; `slot` says which were evaluated.
    std::vector<TrajectoryEntry> entries;
    std::vector<Materialized> fresh;
    std::vector<std::size_t> slot;
    for (const Candidate& candidate : proposals) {
      Materialized m = evaluator.materialize(candidate);
      auto dup = m.rejection.empty() ? seen.find(m.source_hash) : seen.end();
      Evaluation e;
      e.candidate_id = candidate.id;
      e.source_hash = m.source_hash;
      e.code = m.code;
      if (dup != seen.end()) {
        e.verdict = Verdict::kNotFaster;
        e.duplicate_of = dup->second;
        e.reason = "same code as " + dup->second + "; not evaluated again";
      } else {
        if (m.rejection.empty()) seen[m.source_hash] = candidate.id;
        slot.push_back(entries.size());
        fresh.push_back(std::move(m));
      }
      entries.push_back({step, candidate, e});
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

    for (std::size_t i = 0; i < checked.size(); ++i) {
      Checked& c = checked[i];
      ++state.evaluations;
      progress.status("[" + std::to_string(state.evaluations) + "/" +
                      std::to_string(limits.max_evaluations) + "] " + c.evaluation.candidate_id);
      evaluator.time(c);
      const double reward = c.evaluation.reward();
      const bool new_best = reward > 0 && (!best || reward > best->evaluation.reward());
      progress.note("  " + c.evaluation.candidate_id + ": " + verdict_name(c.evaluation.verdict) +
                    " — " + c.evaluation.reason + (new_best ? "  (best so far)" : ""));
      entries[slot[i]].evaluation = c.evaluation;
      if (new_best) {
        if (best) evaluator.release(*best);
        best = std::move(c);
      } else {
        evaluator.release(c);
      }
    }
    for (TrajectoryEntry& entry : entries) {
      if (entry.evaluation.duplicate_of) resolve_duplicate(entry.evaluation, state.trajectory, entries);
      state.trajectory.push_back(entry);
      if (best && entry.candidate.id == best->evaluation.candidate_id && !entry.evaluation.duplicate_of)
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
