#include "runner/evaluate/gpu/traffic_floor.h"
#include "runner/search/search.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <map>

namespace maxcode {

namespace {

double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A duplicate takes the verdict and critique of the candidate it repeats (earlier, or
// in its own batch), without the timing: it was not measured again.
void resolve_duplicate(Evaluation& e, const std::vector<TrajectoryEntry>& earlier,
                       const std::vector<TrajectoryEntry>& batch) {
  for (const auto* list : {&earlier, &batch})
    for (const TrajectoryEntry& other : *list)
      if (other.candidate.id == *e.duplicate_of && !other.evaluation.duplicate_of) {
        e.verdict = other.evaluation.verdict;
        e.reason = "same code as " + other.candidate.id + ": " + other.evaluation.reason;
        e.critique = other.evaluation.critique;
        e.critic = other.evaluation.critic;
        return;
      }
}

// Keeps the `keep` proposals with the highest reward-to-go estimates (unscored ones
// last, proposal order breaking ties); unusable proposals are never worth a slot.
std::vector<Candidate> rerank(std::vector<Candidate> proposals, std::size_t keep, Reranker& reranker,
                              const SearchState& state) {
  std::vector<std::future<std::optional<double>>> scores;
  for (const Candidate& c : proposals)
    scores.push_back(std::async(std::launch::async, [&reranker, &state, &c]() -> std::optional<double> {
      if (c.error) return std::nullopt;
      return reranker.score(state, c);
    }));
  for (std::size_t i = 0; i < proposals.size(); ++i) proposals[i].rerank_score = scores[i].get();
  std::stable_sort(proposals.begin(), proposals.end(), [](const Candidate& a, const Candidate& b) {
    const double sa = a.error ? -2 : a.rerank_score.value_or(-1), sb = b.error ? -2 : b.rerank_score.value_or(-1);
    return sa > sb;
  });
  if (proposals.size() > keep) proposals.resize(keep);
  return proposals;
}

std::string budget_spent(const SearchLimits& limits, const SearchState& state, const Spend* spend,
                         std::chrono::steady_clock::time_point start) {
  if (state.evaluations >= limits.max_evaluations)
    return "evaluation budget spent (" + std::to_string(limits.max_evaluations) + ")";
  if (since(start) >= limits.max_wall_s) return "time budget spent (" + std::to_string(limits.max_wall_s) + " s)";
  if (spend && limits.max_tokens > 0 && spend->tokens() >= limits.max_tokens)
    return "token budget spent (" + std::to_string(spend->tokens()) + " of " + std::to_string(limits.max_tokens) + ")";
  if (spend && limits.max_dollars > 0 && spend->dollars() >= limits.max_dollars)
    return "dollar budget spent ($" + std::to_string(spend->dollars()) + ")";
  if (spend && limits.max_timing_s > 0 && spend->timing_seconds() >= limits.max_timing_s)
    return "timing budget spent (" + std::to_string(spend->timing_seconds()) + " s)";
  if (spend && !spend->exhausted().empty()) return spend->exhausted();
  return "";
}

}  // namespace

SearchResult run_search(Evaluator& evaluator, Policy& policy, const Target& target, const SearchLimits& limits,
                        Progress& progress, const SearchHooks& hooks, const SearchState* resume_from) {
  const auto start = std::chrono::steady_clock::now();
  SearchResult result;
  SearchState state;
  state.target = target;
  state.original_definition = evaluator.baseline_definition();
  std::optional<Checked> best;  // its workspace stays for the confirmation run
  std::map<std::string, std::string> seen;  // source hash -> first candidate id
  Candidate original;
  original.id = "original";
  seen[evaluator.materialize(original).source_hash] = "the original";
  int step = 0;
  int idle_batches = 0;

  if (resume_from) {
    state = *resume_from;
    for (const auto& entry : state.trajectory) {
      step = std::max(step, entry.step);
      if (!entry.evaluation.duplicate_of && !entry.evaluation.source_hash.empty())
        seen.emplace(entry.evaluation.source_hash, entry.candidate.id);
    }
    policy.resume(state);
    // The best's workspace did not survive the interruption: rebuild it for confirmation.
    if (const TrajectoryEntry* b = state.best_entry()) {
      progress.status("resume: rebuilding the best so far, " + b->candidate.id);
      Checked c = evaluator.check(evaluator.materialize(b->candidate));
      if (c.passed) {
        c.evaluation = b->evaluation;
        best = std::move(c);
      }
    }
    progress.note("resumed at step " + std::to_string(step) + " with " + std::to_string(state.evaluations) +
                  " evaluation(s) done");
  }

  try {
    for (;;) {
      if (hooks.stop_requested && hooks.stop_requested()) {
        result.stop_reason = "stopped by request";
        result.stopped = true;
        break;
      }
      if (std::string spent = budget_spent(limits, state, hooks.spend, start); !spent.empty()) {
        result.stop_reason = spent;
        break;
      }
      const int want = std::min(limits.batch, limits.max_evaluations - state.evaluations);
      const int ask = hooks.reranker ? std::max(limits.proposals, want) : want;
      progress.status("step " + std::to_string(step + 1) + ": asking the " + policy.name() + " policy for " +
                      std::to_string(ask) + " candidate(s)");
      std::vector<Candidate> proposals = policy.propose(state, ask);
      state.proposed += static_cast<int>(proposals.size());
      if (proposals.empty()) {
        const std::string spent = budget_spent(limits, state, hooks.spend, start);
        result.stop_reason = !spent.empty() ? spent : "the " + policy.name() + " policy has nothing more to try";
        break;
      }
      ++step;
      if (hooks.reranker && static_cast<int>(proposals.size()) > want) {
        progress.status("step " + std::to_string(step) + ": reranking " + std::to_string(proposals.size()) +
                        " proposals");
        proposals = rerank(std::move(proposals), static_cast<std::size_t>(want), *hooks.reranker, state);
      }

      // Duplicates (same code after normalization) reuse the earlier verdict and cost
      // nothing. Entries keep the order of the proposals; `slot` says which ran.
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
      // Repeats, unusable replies and code the scope rule rejects cost no build but do
      // cost model calls: three steps in a row with nothing to build mean the policy has
      // run dry.
      const std::size_t buildable = static_cast<std::size_t>(
          std::count_if(fresh.begin(), fresh.end(), [](const Materialized& m) { return m.rejection.empty(); }));
      idle_batches = buildable == 0 ? idle_batches + 1 : 0;
      const std::string idle_reason =
          fresh.empty() ? "the " + policy.name() + " policy keeps proposing code already evaluated"
                        : "the " + policy.name() + " policy gave nothing to build in 3 steps in a row (last: " +
                              fresh.back().rejection + ")";

      // Checking (build, tests, outputs) in parallel; timing one at a time afterwards.
      progress.status("step " + std::to_string(step) + ": building and checking " + std::to_string(fresh.size()) +
                      " candidate(s)");
      std::vector<std::future<Checked>> futures;
      for (const Materialized& m : fresh)
        futures.push_back(std::async(std::launch::async, [&evaluator, &m] { return evaluator.check(m); }));
      std::vector<Checked> checked;
      for (auto& f : futures) checked.push_back(f.get());

      // Timing: one candidate at a time per timing worker (one per GPU), so that
      // nothing else runs on a GPU while its kernels are timed.
      const int workers = std::min<int>(evaluator.timing_workers(), static_cast<int>(checked.size()));
      if (workers > 1) {
        std::atomic<std::size_t> next{0};
        std::vector<std::future<void>> timers;
        for (int w = 0; w < workers; ++w)
          timers.push_back(std::async(std::launch::async, [&, w] {
            for (std::size_t i = next++; i < checked.size(); i = next++) evaluator.time(checked[i], w);
          }));
        for (auto& t : timers) t.get();
      }
      for (std::size_t i = 0; i < checked.size(); ++i) {
        Checked& c = checked[i];
        // Only what was built counts against max_evaluations (an unusable reply is
        // counted in the spend, as a call).
        if (fresh[i].rejection.empty()) ++state.evaluations;
        progress.status("[" + std::to_string(state.evaluations) + "/" + std::to_string(limits.max_evaluations) +
                        "] " + c.evaluation.candidate_id);
        if (workers <= 1) evaluator.time(c);
        if (hooks.spend && c.evaluation.timing) {
          // The seconds the session held the machine; a session that ended early (a
          // failure) counts its rounds' figures.
          double timed = c.evaluation.timing->session_s;
          if (timed <= 0) {
            for (double s : c.evaluation.timing->candidate_s) timed += s;
            for (double s : c.evaluation.timing->baseline_s) timed += s;
          }
          hooks.spend->add_timing_seconds(timed);
        }
        entries[slot[i]].evaluation = c.evaluation;
        const double reward = c.evaluation.reward();
        if (reward > 0 && (!best || reward > best->evaluation.reward())) {
          if (best) evaluator.release(*best);
          best = std::move(c);
        } else {
          evaluator.release(c);
        }
      }

      // Critiques of this step's attempts, concurrently: the next proposal reads them.
      if (hooks.critic) {
        progress.status("step " + std::to_string(step) + ": critiquing " + std::to_string(slot.size()) + " attempt(s)");
        std::vector<std::future<std::string>> critiques;
        for (std::size_t s : slot)
          critiques.push_back(std::async(std::launch::async, [&hooks, &entries, s] {
            return hooks.critic->critique(entries[s].evaluation);
          }));
        for (std::size_t k = 0; k < slot.size(); ++k) {
          entries[slot[k]].evaluation.critique = critiques[k].get();
          entries[slot[k]].evaluation.critic = hooks.critic->name();
        }
        if (best)
          for (std::size_t s : slot)
            if (entries[s].candidate.id == best->evaluation.candidate_id) best->evaluation = entries[s].evaluation;
      }

      for (TrajectoryEntry& entry : entries) {
        if (entry.evaluation.duplicate_of) resolve_duplicate(entry.evaluation, state.trajectory, entries);
        state.trajectory.push_back(entry);
        if (best && entry.candidate.id == best->evaluation.candidate_id && !entry.evaluation.duplicate_of)
          state.best = state.trajectory.size() - 1;
        const Evaluation& e = entry.evaluation;
        progress.note("  " + e.candidate_id + ": " + verdict_name(e.verdict) + " — " + e.reason +
                      (state.best && state.trajectory.size() - 1 == *state.best ? "  (best so far)" : ""));
        if (hooks.on_entry) hooks.on_entry(state.trajectory.back());
      }
      if (hooks.on_step) hooks.on_step(state);
      if (idle_batches >= 3) {
        result.stop_reason = idle_reason;
        break;
      }
    }
  } catch (const llm::LlmError& error) {
    // A rejected key or a missing variable does not fix itself: stop, keep what we have.
    result.fatal = error.what();
    result.stop_reason = std::string("stopped: ") + error.what();
  }

  if (best && !result.stopped) {
    progress.status("confirming " + best->evaluation.candidate_id + " in a fresh A/B session");
    Timing confirmed = evaluator.confirm(*best);
    if (confirmed.significant) {
      result.winner = Winner{best->evaluation.candidate_id, confirmed, best->evaluation, best->materialized.files};
      // Hardware metrics of the winner, for its critique and the report.
      std::vector<NcuKernel> ncu = evaluator.ncu_metrics(&*best);
      if (!ncu.empty()) {
        nlohmann::json kernels = nlohmann::json::array();
        for (const NcuKernel& k : ncu) kernels.push_back(to_json(k));
        result.winner->evaluation.gpu["ncu"] = kernels;
      }
      // The physics floor from the original's measured traffic: no winner moves far less.
      const std::string floor = check_traffic_floor(evaluator.baseline_ncu(), ncu);
      if (!floor.empty()) {
        for (auto& entry : state.trajectory)
          if (entry.evaluation.candidate_id == best->evaluation.candidate_id) {
            entry.evaluation.verdict = Verdict::kRejected;
            entry.evaluation.reason = floor;
          }
        result.unconfirmed = best->evaluation.candidate_id + " rejected: " + floor;
        result.winner.reset();
      }
    } else if (best->evaluation.verdict == Verdict::kRejected) {
      // Rejected at confirmation (the out-of-process witness): the trajectory says so.
      for (auto& entry : state.trajectory)
        if (entry.evaluation.candidate_id == best->evaluation.candidate_id) {
          entry.evaluation.verdict = Verdict::kRejected;
          entry.evaluation.reason = best->evaluation.reason;
          entry.evaluation.witness = best->evaluation.witness;
        }
      result.unconfirmed = best->evaluation.candidate_id + " rejected: " + best->evaluation.reason;
    } else {
      char figure[160];
      std::snprintf(figure, sizeof figure, "%.3fx (95%% CI %.3f-%.3f)", confirmed.speedup.median,
                    confirmed.speedup.low, confirmed.speedup.high);
      result.unconfirmed = best->evaluation.candidate_id + " did not confirm: " +
                           (confirmed.stop_reason.rfind("failed", 0) == 0 ? confirmed.stop_reason : std::string(figure));
    }
    evaluator.release(*best);
  } else if (best) {
    evaluator.release(*best);
  }
  result.trajectory = state.trajectory;
  result.evaluations = state.evaluations;
  result.wall_s = since(start);
  if (hooks.spend) result.spend = hooks.spend->to_json();
  return result;
}

}  // namespace maxcode
