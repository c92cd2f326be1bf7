// The search loop end to end on the fixture: a knob that removes 3 or 15 of 16 redundant
// passes must be found, confirmed, and kept as the best; the trajectory records every
// candidate once.
#include "runner/search/search.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "runner/llm/provider.h"
#include "support/fixture_repo.h"

namespace maxcode {
namespace {

using testing::FixtureRepo;

TEST(Search, TuneFindsAndConfirmsTheKnobThatRemovesWork) {
  FixtureRepo repo("sum");
  Evaluator& evaluator = repo.evaluator();
  evaluator.measure_noise();
  Knob passes{"PASSES", "src/sum.cpp", 9, "16", {"16", "4", "1"}};
  auto policy = make_tune_policy({passes}, 6, 1);
  Progress progress(stderr, true);
  std::vector<std::string> streamed;
  SearchHooks hooks;
  hooks.on_entry = [&](const TrajectoryEntry& e) { streamed.push_back(e.candidate.id); };
  SearchResult result = run_search(evaluator, *policy, Target{"src/sum.cpp", "sum_squares"},
                                   SearchLimits{6, 2, 2, 600}, progress, hooks);
  ASSERT_EQ(result.trajectory.size(), 2u);  // 3 values minus the original
  EXPECT_EQ(streamed, (std::vector<std::string>{"PASSES=4", "PASSES=1"}));
  EXPECT_EQ(result.evaluations, 2);
  EXPECT_NE(result.stop_reason.find("nothing more"), std::string::npos) << result.stop_reason;
  ASSERT_TRUE(result.winner) << (result.unconfirmed ? *result.unconfirmed : "no best");
  // Which of the two faster settings wins is a timing verdict: on a quiet machine
  // PASSES=1 (a sixteenth of the work), but under load a CI rehearsal once ranked
  // PASSES=4 first. What must hold is that the winner is one of them and that its files
  // are its own setting's.
  const std::string setting = result.winner->id.substr(result.winner->id.find('=') + 1);
  EXPECT_TRUE(result.winner->id == "PASSES=1" || result.winner->id == "PASSES=4") << result.winner->id;
  // Confirmed: a winner exists only when its fresh session is significant. How far
  // above 1 it lands is a figure, not a verdict: a CI rehearsal under load gave
  // 3.48x [1.32, 38.3] where a quiet machine gave 4.47x [3.29, 5.63].
  EXPECT_TRUE(result.winner->confirmed.significant);
  EXPECT_GT(result.winner->confirmed.speedup.low, 1.0);
  EXPECT_GE(result.winner->confirmed.speedup.rounds, 5);
  std::printf("tune winner %s: %.2fx [%.2f, %.2f] over %d rounds\n", result.winner->id.c_str(),
              result.winner->confirmed.speedup.median, result.winner->confirmed.speedup.low,
              result.winner->confirmed.speedup.high, result.winner->confirmed.speedup.rounds);
  EXPECT_NE(result.winner->files.at("src/sum.cpp").find("#define PASSES " + setting + " "), std::string::npos);
}

// The wall budget holds within a step: a step that began in time builds its candidates,
// but no timing session starts once the budget is spent (model calls: policy_llm_test).
TEST(Search, AWallBudgetSpentDuringAStepStartsNoTiming) {
  FixtureRepo repo("sum");
  Evaluator& evaluator = repo.evaluator();
  Knob passes{"PASSES", "src/sum.cpp", 9, "16", {"16", "4", "1"}};
  auto policy = make_tune_policy({passes}, 6, 1);
  Progress progress(stderr, true);
  SearchHooks hooks;
  // Building a candidate takes far longer than 50 ms: the budget runs out in step 1.
  SearchResult result = run_search(evaluator, *policy, Target{"src/sum.cpp", "sum_squares"},
                                   SearchLimits{6, 2, 2, 0.05}, progress, hooks);
  ASSERT_EQ(result.trajectory.size(), 2u);
  for (const TrajectoryEntry& e : result.trajectory) {
    EXPECT_EQ(e.evaluation.verdict, Verdict::kNotFaster) << e.evaluation.reason;
    EXPECT_FALSE(e.evaluation.timing);
    EXPECT_NE(e.evaluation.reason.find("not timed: the time budget (50 ms) ran out during this step"),
              std::string::npos)
        << e.evaluation.reason;
  }
  EXPECT_FALSE(result.winner);
  EXPECT_NE(result.stop_reason.find("time budget spent"), std::string::npos) << result.stop_reason;
}

TEST(Search, DuplicatesCostNothingAndReuseTheVerdict) {
  FixtureRepo repo("sum");
  Evaluator& evaluator = repo.evaluator();
  class Twice : public Policy {
   public:
    std::string name() const override { return "twice"; }
    std::vector<Candidate> propose(const SearchState&, int) override {
      if (calls_++) return {};
      Candidate a;
      a.id = "a";
      a.definition = "long long sum_squares(const int* v, int n) { return n > 1000 ? 1 : 0; }";
      Candidate b = a;
      b.id = "b";
      b.definition = "long long sum_squares(const int* v, int n) {\n  // same code, other layout\n  return n > 1000\n    ? 1 : 0;\n}";
      Candidate same_as_original;
      same_as_original.id = "orig";
      same_as_original.knobs = {{"PASSES", "16"}};
      return {a, b, same_as_original};
    }
    int calls_ = 0;
  } policy;
  Progress progress(stderr, true);
  SearchResult result = run_search(evaluator, policy, Target{"src/sum.cpp", "sum_squares"},
                                   SearchLimits{10, 4, 4, 600}, progress, SearchHooks{});
  ASSERT_EQ(result.trajectory.size(), 3u);
  EXPECT_EQ(result.evaluations, 1);  // only "a" was built and run
  const auto& b = result.trajectory[1].evaluation;
  EXPECT_EQ(b.candidate_id, "b");
  ASSERT_TRUE(b.duplicate_of);
  EXPECT_EQ(*b.duplicate_of, "a");
  EXPECT_EQ(b.verdict, result.trajectory[0].evaluation.verdict);
  const auto& orig = result.trajectory[2].evaluation;
  ASSERT_TRUE(orig.duplicate_of);
  EXPECT_EQ(*orig.duplicate_of, "the original");
  EXPECT_FALSE(result.winner);
}

}  // namespace
}  // namespace maxcode

namespace maxcode {
namespace {

// k = 3 proposals, n = 1 evaluated: the reranker's choice is the one that runs. The
// reranker is a real provider (a local command reading the prompt on stdin).
TEST(Search, RerankerDecidesWhichProposalsAreEvaluated) {
  testing::FixtureRepo repo("sum");
  Evaluator& evaluator = repo.evaluator();
  class Three : public Policy {
   public:
    std::string name() const override { return "three"; }
    std::vector<Candidate> propose(const SearchState&, int count) override {
      EXPECT_EQ(count, 3) << "the policy is asked for k, not n";
      if (calls_++) return {};
      std::vector<Candidate> out;
      for (const char* id : {"plain", "chosen", "other"}) {
        Candidate c;
        c.id = id;
        c.definition = std::string("long long sum_squares(const int* v, int n) {  // ") + id +
                       "\n  long long s = 0;\n  for (int i = 0; i < n; ++i) s += square(v[i]);\n  return s + " +
                       (std::string(id) == "other" ? "1" : "0") + ";\n}";
        out.push_back(c);
      }
      return out;
    }
    int calls_ = 0;
  } policy;
  llm::ProviderConfig config;
  config.provider = "command";
  config.command = "grep -q '// chosen' && echo 'About 4.5' || echo 1.1";
  config.timeout_s = 10;
  auto provider = llm::make_provider(config);
  Spend spend;
  TargetContext context = make_target_context(Target{"src/sum.cpp", "sum_squares"}, "", evaluator.baseline_definition());
  auto reranker = make_llm_reranker(context, *provider, default_prompts(), spend);
  SearchHooks hooks;
  hooks.reranker = reranker.get();
  hooks.spend = &spend;
  Progress progress(stderr, true);
  SearchResult result = run_search(evaluator, policy, Target{"src/sum.cpp", "sum_squares"},
                                   SearchLimits{1, 1, 3, 600}, progress, hooks);
  ASSERT_EQ(result.trajectory.size(), 1u);
  EXPECT_EQ(result.trajectory[0].candidate.id, "chosen");
  ASSERT_TRUE(result.trajectory[0].candidate.rerank_score);
  EXPECT_DOUBLE_EQ(*result.trajectory[0].candidate.rerank_score, 4.5);
  EXPECT_EQ(result.evaluations, 1);
  EXPECT_EQ(spend.to_json()["llm_calls"], 3);
}

}  // namespace
}  // namespace maxcode
