#include "runner/evaluate/gpu/traffic_floor.h"
#include "runner/search/search.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <map>

#include "runner/util/format.h"

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

// One search, step by step (docs/method.md): each method below is one step of the
// loop, in the order run() calls them.
class SearchLoop {
 public:
  SearchLoop(Evaluator& evaluator, Policy& policy, const Target& target, const SearchLimits& limits, Progress& progress,
             const SearchHooks& hooks)
      : evaluator_(evaluator), policy_(policy), limits_(limits), progress_(progress), hooks_(hooks) {
    state_.target = target;
    state_.original_definition = evaluator.baseline_definition();
    Candidate original;
    original.id = "original";
    seen_[evaluator.materialize(original).source_hash] = "the original";
    if (hooks_.spend)
      hooks_.spend->set_deadline(start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                              std::chrono::duration<double>(limits_.max_wall_s)),
                                 limits_.max_wall_s);
  }

  SearchResult run(const SearchState* resume_from) {
    if (resume_from) resume(*resume_from);
    try {
      while (step()) {
      }
    } catch (const llm::LlmError& error) {
      // A rejected key or a missing variable does not fix itself: stop, keep what we have.
      result_.fatal = error.what();
      result_.stop_reason = std::string("stopped: ") + error.what();
    }
    if (best_ && !result_.stopped) confirm_winner(evaluator_, *best_, state_.trajectory, result_, progress_);
    if (best_) evaluator_.release(*best_);
    result_.trajectory = state_.trajectory;
    result_.evaluations = state_.evaluations;
    result_.wall_s = since(start_);
    if (hooks_.spend) result_.spend = hooks_.spend->to_json();
    return result_;
  }

 private:
  // One step's candidates: every proposal in order (`entries`), the ones not seen
  // before that go through the evaluator (`fresh`), and the entry each of those fills
  // (`slot`). Duplicates (same code after normalization) reuse the earlier verdict.
  struct Batch {
    std::vector<TrajectoryEntry> entries;
    std::vector<Materialized> fresh;
    std::vector<std::size_t> slot;
  };

  // Continues an interrupted search: its trajectory, the code seen, the policy's state.
  void resume(const SearchState& from) {
    state_ = from;
    for (const auto& entry : state_.trajectory) {
      step_ = std::max(step_, entry.step);
      if (!entry.evaluation.duplicate_of && !entry.evaluation.source_hash.empty())
        seen_.emplace(entry.evaluation.source_hash, entry.candidate.id);
    }
    policy_.resume(state_);
    // The best's workspace did not survive the interruption: rebuild it for confirmation.
    if (const TrajectoryEntry* b = state_.best_entry()) {
      progress_.status("resume: rebuilding the best so far, " + b->candidate.id);
      Checked c = evaluator_.check(evaluator_.materialize(b->candidate));
      if (c.passed) {
        c.evaluation = b->evaluation;
        best_ = std::move(c);
      }
    }
    progress_.note("resumed at step " + std::to_string(step_) + " with " + std::to_string(state_.evaluations) +
                   " evaluation(s) done");
  }

  // One step of the loop; false when the search ends (the stop reason set).
  bool step() {
    if (hooks_.stop_requested && hooks_.stop_requested()) {
      result_.stop_reason = "stopped by request";
      result_.stopped = true;
      return false;
    }
    if (std::string spent = budget_spent(limits_, state_, hooks_.spend, start_); !spent.empty()) {
      result_.stop_reason = spent;
      return false;
    }
    const int want = std::min(limits_.batch, limits_.max_evaluations - state_.evaluations);
    std::vector<Candidate> proposals = propose(want);
    if (proposals.empty()) {
      const std::string spent = budget_spent(limits_, state_, hooks_.spend, start_);
      result_.stop_reason = !spent.empty() ? spent : "the " + policy_.name() + " policy has nothing more to try";
      return false;
    }
    Batch batch = deduplicate(proposals);
    const std::string idle = idle_reason(batch);
    std::vector<Checked> checked = check(batch);
    time_and_keep_best(batch, checked);
    critique(batch);
    record(batch);
    if (hooks_.on_step) hooks_.on_step(state_);
    if (idle_batches_ >= 3) {
      result_.stop_reason = idle;
      return false;
    }
    return true;
  }

  // The policy's proposals, reranked to `want` when a reranker is set (it sees more).
  std::vector<Candidate> propose(int want) {
    const int ask = hooks_.reranker ? std::max(limits_.proposals, want) : want;
    progress_.status("step " + std::to_string(step_ + 1) + ": asking the " + policy_.name() + " policy for " +
                     std::to_string(ask) + " candidate(s)");
    std::vector<Candidate> proposals = policy_.propose(state_, ask);
    state_.proposed += static_cast<int>(proposals.size());
    if (proposals.empty()) return proposals;
    ++step_;
    if (hooks_.reranker && static_cast<int>(proposals.size()) > want) {
      progress_.status("step " + std::to_string(step_) + ": reranking " + std::to_string(proposals.size()) +
                       " proposals");
      proposals = rerank(std::move(proposals), static_cast<std::size_t>(want), *hooks_.reranker, state_);
    }
    return proposals;
  }

  // Duplicates cost nothing; the rest go on, in the order proposed.
  Batch deduplicate(const std::vector<Candidate>& proposals) {
    Batch batch;
    for (const Candidate& candidate : proposals) {
      Materialized m = evaluator_.materialize(candidate);
      auto dup = m.rejection.empty() ? seen_.find(m.source_hash) : seen_.end();
      Evaluation e;
      e.candidate_id = candidate.id;
      e.source_hash = m.source_hash;
      e.code = m.code;
      if (dup != seen_.end()) {
        e.verdict = Verdict::kNotFaster;
        e.duplicate_of = dup->second;
        e.reason = "same code as " + dup->second + "; not evaluated again";
      } else {
        if (m.rejection.empty()) seen_[m.source_hash] = candidate.id;
        batch.slot.push_back(batch.entries.size());
        batch.fresh.push_back(std::move(m));
      }
      batch.entries.push_back({step_, candidate, e});
    }
    return batch;
  }

  // Repeats, unusable replies and code the scope rule rejects cost no build but do
  // cost model calls: three steps in a row with nothing to build mean the policy has
  // run dry. Counts this step and says why the search would stop.
  std::string idle_reason(const Batch& batch) {
    const auto buildable = std::count_if(batch.fresh.begin(), batch.fresh.end(),
                                         [](const Materialized& m) { return m.rejection.empty(); });
    idle_batches_ = buildable == 0 ? idle_batches_ + 1 : 0;
    return batch.fresh.empty()
               ? "the " + policy_.name() + " policy keeps proposing code already evaluated"
               : "the " + policy_.name() +
                     " policy gave nothing to build in 3 steps in a row (last: " + batch.fresh.back().rejection + ")";
  }

  // Checking (build, tests, outputs) of the fresh candidates, in parallel.
  std::vector<Checked> check(const Batch& batch) {
    progress_.status("step " + std::to_string(step_) + ": building and checking " + std::to_string(batch.fresh.size()) +
                     " candidate(s)");
    std::vector<std::future<Checked>> futures;
    for (const Materialized& m : batch.fresh)
      futures.push_back(std::async(std::launch::async, [this, &m] { return evaluator_.check(m); }));
    std::vector<Checked> checked;
    for (auto& f : futures) checked.push_back(f.get());
    return checked;
  }

  // Timing: one candidate at a time per timing worker (one per GPU), so that nothing
  // else runs on a GPU while its kernels are timed. Each verdict lands in its entry;
  // the best so far keeps its workspace (for the confirmation), the rest are released.
  void time_and_keep_best(Batch& batch, std::vector<Checked>& checked) {
    const int workers = std::min<int>(evaluator_.timing_workers(), static_cast<int>(checked.size()));
    if (workers > 1) {
      std::atomic<std::size_t> next{0};
      std::vector<std::future<void>> timers;
      for (int w = 0; w < workers; ++w)
        timers.push_back(std::async(std::launch::async, [&, w] {
          for (std::size_t i = next++; i < checked.size(); i = next++) time_unless_out_of_time(checked[i], w);
        }));
      for (auto& t : timers) t.get();
    }
    for (std::size_t i = 0; i < checked.size(); ++i) {
      Checked& c = checked[i];
      // Only what was built counts against max_evaluations (an unusable reply is
      // counted in the spend, as a call).
      if (batch.fresh[i].rejection.empty()) ++state_.evaluations;
      progress_.status("[" + std::to_string(state_.evaluations) + "/" + std::to_string(limits_.max_evaluations) + "] " +
                       c.evaluation.candidate_id);
      if (workers <= 1) time_unless_out_of_time(c, 0);
      count_timing(c.evaluation);
      batch.entries[batch.slot[i]].evaluation = c.evaluation;
      const double reward = c.evaluation.reward();
      if (reward > 0 && (!best_ || reward > best_->evaluation.reward())) {
        if (best_) evaluator_.release(*best_);
        best_ = std::move(c);
      } else {
        evaluator_.release(c);
      }
    }
  }

  // A timing session takes a while (rounds of both versions): none starts once the wall
  // budget is spent, so that a search overruns it by at most the session in progress.
  // A candidate left untimed has no speedup, so no claim: it is said in its reason.
  void time_unless_out_of_time(Checked& c, int worker) {
    if (c.passed && since(start_) >= limits_.max_wall_s) {
      c.evaluation.verdict = Verdict::kNotFaster;
      c.evaluation.reason = "passed its checks; not timed: the time budget (" + format_duration(limits_.max_wall_s) +
                            ") ran out during this step";
      return;
    }
    evaluator_.time(c, worker);
  }

  // The seconds a session held the machine, into the spend; a session that ended early
  // (a failure) counts its rounds' figures.
  void count_timing(const Evaluation& e) {
    if (!hooks_.spend || !e.timing) return;
    double timed = e.timing->session_s;
    if (timed <= 0) {
      for (double s : e.timing->candidate_s) timed += s;
      for (double s : e.timing->baseline_s) timed += s;
    }
    hooks_.spend->add_timing_seconds(timed);
  }

  // Critiques of this step's attempts, concurrently: the next proposal reads them.
  void critique(Batch& batch) {
    if (!hooks_.critic) return;
    progress_.status("step " + std::to_string(step_) + ": critiquing " + std::to_string(batch.slot.size()) +
                     " attempt(s)");
    std::vector<std::future<std::string>> critiques;
    for (std::size_t s : batch.slot)
      critiques.push_back(std::async(
          std::launch::async, [this, &batch, s] { return hooks_.critic->critique(batch.entries[s].evaluation); }));
    for (std::size_t k = 0; k < batch.slot.size(); ++k) {
      batch.entries[batch.slot[k]].evaluation.critique = critiques[k].get();
      batch.entries[batch.slot[k]].evaluation.critic = hooks_.critic->name();
    }
    if (best_)
      for (std::size_t s : batch.slot)
        if (batch.entries[s].candidate.id == best_->evaluation.candidate_id)
          best_->evaluation = batch.entries[s].evaluation;
  }

  // The step's entries into the trajectory (duplicates resolved), each announced.
  void record(Batch& batch) {
    for (TrajectoryEntry& entry : batch.entries) {
      if (entry.evaluation.duplicate_of) resolve_duplicate(entry.evaluation, state_.trajectory, batch.entries);
      state_.trajectory.push_back(entry);
      if (best_ && entry.candidate.id == best_->evaluation.candidate_id && !entry.evaluation.duplicate_of)
        state_.best = state_.trajectory.size() - 1;
      const Evaluation& e = entry.evaluation;
      progress_.note("  " + e.candidate_id + ": " + verdict_name(e.verdict) + " — " + e.reason +
                     (state_.best && state_.trajectory.size() - 1 == *state_.best ? "  (best so far)" : ""));
      if (hooks_.on_entry) hooks_.on_entry(state_.trajectory.back());
    }
  }

  Evaluator& evaluator_;
  Policy& policy_;
  const SearchLimits& limits_;
  Progress& progress_;
  const SearchHooks& hooks_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  SearchResult result_;
  SearchState state_;
  std::optional<Checked> best_;              // its workspace stays for the confirmation run
  std::map<std::string, std::string> seen_;  // source hash -> first candidate id
  int step_ = 0;
  int idle_batches_ = 0;
};

// Marks the candidate's entries in the trajectory rejected, for `reason`; the witness's
// record goes with them when it was the witness that rejected.
void reject_in(std::vector<TrajectoryEntry>& trajectory, const std::string& id, const std::string& reason,
               const std::optional<WitnessRecord>& witness = std::nullopt) {
  for (auto& entry : trajectory)
    if (entry.evaluation.candidate_id == id) {
      entry.evaluation.verdict = Verdict::kRejected;
      entry.evaluation.reason = reason;
      if (witness) entry.evaluation.witness = witness;
    }
}

}  // namespace

void confirm_winner(Evaluator& evaluator, Checked& best, std::vector<TrajectoryEntry>& trajectory, SearchResult& result,
                    Progress& progress) {
  const std::string id = best.evaluation.candidate_id;
  progress.status("confirming " + id + " in a fresh A/B session");
  Timing confirmed = evaluator.confirm(best);
  if (confirmed.significant) {
    result.winner = Winner{id, confirmed, best.evaluation, best.materialized.files};
    // Hardware metrics of the winner, for its critique and the report.
    std::vector<NcuKernel> ncu = evaluator.ncu_metrics(&best);
    if (!ncu.empty()) {
      nlohmann::json kernels = nlohmann::json::array();
      for (const NcuKernel& k : ncu) kernels.push_back(to_json(k));
      result.winner->evaluation.gpu["ncu"] = kernels;
    }
    // The physics floor from the original's measured traffic: no winner moves far less.
    const std::string floor = check_traffic_floor(evaluator.baseline_ncu(), ncu);
    if (!floor.empty()) {
      reject_in(trajectory, id, floor);
      result.unconfirmed = id + " rejected: " + floor;
      result.winner.reset();
    }
  } else if (best.evaluation.verdict == Verdict::kRejected) {
    // Rejected at confirmation (the out-of-process witness): the trajectory says so.
    reject_in(trajectory, id, best.evaluation.reason, best.evaluation.witness);
    result.unconfirmed = id + " rejected: " + best.evaluation.reason;
  } else {
    result.unconfirmed = id + " did not confirm: " +
                         (confirmed.stop_reason.rfind("failed", 0) == 0
                              ? confirmed.stop_reason
                              : format_numbers("%.3fx (95%% CI %.3f-%.3f)", confirmed.speedup.median,
                                               confirmed.speedup.low, confirmed.speedup.high));
  }
}

SearchResult run_search(Evaluator& evaluator, Policy& policy, const Target& target, const SearchLimits& limits,
                        Progress& progress, const SearchHooks& hooks, const SearchState* resume_from) {
  return SearchLoop(evaluator, policy, target, limits, progress, hooks).run(resume_from);
}

}  // namespace maxcode
