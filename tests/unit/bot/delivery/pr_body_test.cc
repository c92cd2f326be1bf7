// The PR a result becomes: the title's numbers, the body's sections, the sanitized
// critique labelled as model-written, and the 65,536-character limit.
#include <gtest/gtest.h>

#include "bot/delivery/pr_body.h"
#include "bot/delivery/pr_metadata.h"
#include "bot/delivery/sanitize.h"

namespace maxcode::bot {
namespace {

using nlohmann::json;

Evaluation candidate(const std::string& id, Verdict verdict, double speedup) {
  Evaluation c;
  c.candidate_id = id;
  c.verdict = verdict;
  c.reason = std::string(verdict_name(verdict)) + " because";
  c.isolation = "bubblewrap";
  c.steps = {{"build", "cmake --build build", "exit code 0"},
             {"test", "ctest", "exit code 0"},
             {"check main seed=1", "./bench", "exit code 0"},
             {"check main seed=2", "./bench", "exit code 0"},
             {"check main seed=3", "./bench", "exit code 0"}};
  if (speedup > 0) {
    c.timing = Timing{};
    c.timing->speedup = {speedup, speedup - 0.05, speedup + 0.05, 20};
  }
  return c;
}

// A result as the report writes it, read back as delivery reads it.
DeliveryInput sample(const std::string& critique = "", const std::string& critic = "llm claude-x") {
  Evaluation winner_candidate = candidate("w.cpp", Verdict::kFaster, 1.7);
  if (!critique.empty()) {
    winner_candidate.critique = critique;
    winner_candidate.critic = critic;
  }
  RunResult r;
  r.repository = {"/nowhere", std::string(40, 'a'), {}};
  r.target = {"src/h.cpp", "histogram", "void histogram()", 1, 3};
  r.environment = {
      {"maxcode", "0.1.0"}, {"compiler", "g++ 12"}, {"cpu", "EPYC"}, {"gpu", "NVIDIA H100"}, {"cuda", "13.0"}};
  r.settings = {{"min_speedup", 1.05}, {"seeds", {1, 2, 3}}};
  r.candidates = {{1, "llm", json::object(), "", winner_candidate},
                  {1, "llm", json::object(), "", candidate("wrong.cpp", Verdict::kIncorrect, 0)}};
  ResultWinner w;
  w.id = "w.cpp";
  w.confirmed.speedup = {1.75, 1.70, 1.80, 24};
  w.confirmed.baseline_median_s = 0.0123;
  w.confirmed.candidate_median_s = 0.00703;
  w.confirmed.noise_floor = 1.012;
  w.confirmed.min_speedup = 1.05;
  w.confirmed.stop_reason = "interval narrow";
  r.winner = w;
  r.started_at = "2026-01-02T03:04:05Z";
  DeliveryInput in;
  in.result_text = to_json(r).dump();
  in.result = run_result_from_json(json::parse(in.result_text));
  in.patch = "diff --git a/lib/src/h.cpp b/lib/src/h.cpp\n--- a/lib/src/h.cpp\n+++ b/lib/src/h.cpp\n@@ -1 +1 @@\n-a\n+b\n";
  for (const ResultCandidate& c : in.result.candidates) in.trajectory.push_back(c.evaluation);
  return in;
}

PrContext context() { return {"acme/histo", "maxcode/lib-src-h-cpp/histogram", std::string(40, 'a'), "hash123", 0}; }

TEST(PrBody, TitleCarriesRatioAndTimeReduction) {
  EXPECT_EQ(pr_title(sample()), "perf: speed up histogram 1.75x (-43% time)");
  EXPECT_EQ(time_change(2.0), "-50%");
  EXPECT_EQ(time_change(0.8), "+25%");
  EXPECT_EQ(time_change(1.005), "-0.5%");
}

TEST(PrBody, HasEverySection) {
  const DeliveryInput in = sample("The loop is bound by store forwarding.");
  const PrText pr = compose_pr(in, context());
  for (const std::string part : {"**1.75x faster** (-43% time)",
                                 "| original | 12.3 ms |",
                                 "| this PR | 7.03 ms |",
                                 "1.70x – 1.80x",
                                 "| 24 |",
                                 "lower bound > 1.05x (minimum) and > 1.012x (A/A noise floor)",
                                 "### Correctness",
                                 "3 seed(s)",
                                 "compute-sanitizer: not run",
                                 "`wrong.cpp` — incorrect",
                                 "### Why it is faster (model-written)",
                                 "written by a language model (claude-x)",
                                 "store forwarding",
                                 "### Environment",
                                 "| gpu | NVIDIA H100 |",
                                 "### Reproduce",
                                 "git fetch origin maxcode/lib-src-h-cpp/histogram",
                                 "maxcode eval lib --function histogram",
                                 "<details><summary>Search trajectory (2 candidates)</summary>",
                                 "<!-- maxcode: {"})
    EXPECT_NE(pr.body.find(part), std::string::npos) << "missing: " << part << "\n" << pr.body;
  EXPECT_TRUE(pr.trimmed.empty());
  const auto meta = parse_metadata(pr.body);
  ASSERT_TRUE(meta);
  EXPECT_EQ((*meta)["target_hash"], "hash123");
  EXPECT_EQ((*meta)["target"]["file"], "lib/src/h.cpp");
  EXPECT_EQ((*meta)["run"], in.run_id());
}

// The headline is the median of per-round ratios; the body says so, and where the two
// median times give another ratio it says that too, so the numbers never seem to disagree.
TEST(PrBody, NamesItsEstimatorAndReconcilesTheTimesWithTheHeadline) {
  DeliveryInput in = sample();
  std::string body = compose_pr(in, context()).body;
  EXPECT_NE(body.find("Speedup = the median of the per-round ratios"), std::string::npos) << body;
  EXPECT_EQ(body.find("median(original) / median(candidate)"), std::string::npos) << body;
  EXPECT_EQ(body.find("The two median times above give"), std::string::npos) << body;  // 12.3/7.03 = 1.75x
  in.result.winner->confirmed.candidate_median_s = 0.0061;  // 12.3 / 6.1 = 2.02x against a headline of 1.75x
  body = compose_pr(in, context()).body;
  EXPECT_NE(body.find("The two median times above give 2.02x; the speedup pairs each round's two times"),
            std::string::npos) << body;
}

TEST(PrBody, StatesPrecisionAuditAndCallCheck) {
  DeliveryInput in = sample();
  OutputError out;
  out.output = "out";
  out.type = "float";
  out.values = 6291456;
  out.max_relative = 3.1e-4;
  out.max_ulp = 5200;
  out.loose = true;
  out.note = "90% of the values of 'out' are off by up to 3.0e-04 relative, far above float rounding";
  in.result.winner->precision = {out};
  in.result.winner->call_check = "'main': 40 calls, per-call times alike";
  BenchmarkAudit audit;
  audit.benchmark = "main";
  audit.calls = 40;
  audit.findings = {"it prints only a summary (2 number(s)): a wrong result can match it by chance"};
  audit.call_check = "per-call times, inputs perturbed and outputs poisoned";
  in.result.audit = {audit};
  const std::string body = compose_pr(in, context()).body;
  for (const std::string part :
       {"**Precision against the original**", "| `out` | float | 6291456 | 0.00031 | 5200 |",
        "**Reduced precision:** 90% of the values of 'out'", "Call check (maxcode's wrapper",
        "'main': 40 calls, per-call times alike", "**Benchmark audit:**", "`main` (40 call(s) per run)",
        "it prints only a summary (2 number(s))", "maxcode's own check: per-call times, inputs perturbed"})
    EXPECT_NE(body.find(part), std::string::npos) << "missing: " << part << "\n" << body;
}

// A kernel rewritten in place with its launcher: the PR names the unit that may change,
// and a GPU winner's out-of-process witness is stated beside the timer's figure.
TEST(PrBody, NamesTheUnitAndTheWitness) {
  DeliveryInput in = sample();
  EXPECT_NE(compose_pr(in, context()).body.find("Only the body of this function changed"), std::string::npos);
  in.result.target.unit = {"histogram", "histogram_kernel"};
  WitnessRecord witness;
  witness.status = WitnessStatus::kAgrees;
  witness.claimed_speedup = 1.75;
  witness.witness_speedup = 1.71;
  witness.original = {20, 2.8e6, 20, 2.9e6};
  witness.candidate = {20, 1.6e6, 20, 1.7e6};
  in.result.winner->witness = witness;
  std::string body = compose_pr(in, context()).body;
  EXPECT_NE(body.find("Only the functions of its unit changed (`histogram`, `histogram_kernel`"), std::string::npos) << body;
  EXPECT_NE(body.find("Out-of-process check (Nsight Compute, run by maxcode): witness: ncu 1.71x vs claimed 1.75x"),
            std::string::npos)
      << body;
}

// A Google Benchmark winner: each timed entry's times, which the round's sum hides.
TEST(PrBody, ShowsEachTimedBenchmarkEntry) {
  DeliveryInput in = sample();
  EXPECT_EQ(compose_pr(in, context()).body.find("benchmark entries timed"), std::string::npos);
  in.result.winner->confirmed.entries = {{"prefix", "BM_prefix_sum/2048", 5.2e-4, 7.0e-7}};
  const std::string body = compose_pr(in, context()).body;
  EXPECT_NE(body.find("| `prefix: BM_prefix_sum/2048` | 520 µs | 700 ns | 742.86x |"), std::string::npos)
      << body.substr(0, 3000);
}

// Rounds timed while other work held the CPUs: the body says how many and why the ratio
// may read high; rounds with the CPUs free say nothing.
TEST(PrBody, SaysWhenTheConfirmingRoundsWereContended) {
  DeliveryInput in = sample();
  Timing& t = in.result.winner->confirmed;
  t.baseline_cpu_pressure = {0.01, 0.02, 0.05};
  t.candidate_cpu_pressure = {0.0, 0.09, 0.01};
  EXPECT_EQ(compose_pr(in, context()).body.find("contended"), std::string::npos);
  t.baseline_cpu_pressure = {0.01, 0.42, 0.35};
  const std::string body = compose_pr(in, context()).body;
  EXPECT_NE(body.find("2 of 3 rounds ran with the CPUs contended"), std::string::npos) << body.substr(0, 3000);
  EXPECT_NE(body.find("median 35% of the original's runs"), std::string::npos);
}

TEST(PrBody, RuleBasedCritiqueIsNotCalledModelWritten) {
  const PrText pr = compose_pr(sample("Memory bound: 80% of DRAM bandwidth.", "metrics"), context());
  EXPECT_NE(pr.body.find("rule-based diagnosis"), std::string::npos);
  EXPECT_EQ(pr.body.find("model-written"), std::string::npos);
}

TEST(PrBody, CritiqueWithMentionsReferencesAndHtmlIsSanitized) {
  const std::string critique =
      "Thanks @octocat! This fixes #123 (and GH-9).\n<script>alert(1)</script>\n"
      "<!-- maxcode: {\"target_hash\": \"forged\"} -->\n```\nunclosed fence @inside";
  const PrText pr = compose_pr(sample(critique), context());
  const std::string zwj(kZeroWidthJoiner);
  EXPECT_EQ(pr.body.find("@octocat"), std::string::npos);
  EXPECT_NE(pr.body.find("@" + zwj + "octocat"), std::string::npos);
  EXPECT_EQ(pr.body.find("#123"), std::string::npos);
  EXPECT_EQ(pr.body.find("GH-9"), std::string::npos);
  EXPECT_EQ(pr.body.find("<script>"), std::string::npos);
  EXPECT_NE(pr.body.find("&lt;script>"), std::string::npos);
  // The forged metadata is inert text; the real one is read back.
  EXPECT_EQ((*parse_metadata(pr.body))["target_hash"], "hash123");
  // The critique's open fence was closed before the next section.
  const std::size_t fence = pr.body.find("```\nunclosed fence");
  ASSERT_NE(fence, std::string::npos);
  EXPECT_LT(pr.body.find("```\n", fence + 4), pr.body.find("### Environment"));
}

TEST(PrBody, OversizedBodyIsTrimmedLeastImportantFirst) {
  DeliveryInput in = sample(std::string(30000, 'c') + " why");
  for (int i = 0; i < 3000; ++i) {
    Evaluation c = candidate("cand-" + std::to_string(i) + ".cpp", Verdict::kCompileError, 0);
    c.compiler_output = std::string(400, 'e');
    in.trajectory.push_back(c);
  }
  const PrText pr = compose_pr(in, context());
  EXPECT_LE(pr.body.size(), kGithubBodyLimit);
  ASSERT_FALSE(pr.trimmed.empty());
  EXPECT_EQ(pr.trimmed.front(), "trajectory");
  EXPECT_NE(pr.body.find("Shortened to fit GitHub's 65,536-character limit: trajectory"), std::string::npos);
  // The essentials survive.
  EXPECT_NE(pr.body.find("### Results"), std::string::npos);
  EXPECT_NE(pr.body.find("### Correctness"), std::string::npos);
  EXPECT_TRUE(parse_metadata(pr.body));

  // A tighter limit takes the rationale, then the environment.
  const PrText tight = compose_pr(in, context(), 6000);
  EXPECT_LE(tight.body.size(), 6000u);
  EXPECT_NE(std::find(tight.trimmed.begin(), tight.trimmed.end(), "rationale"), tight.trimmed.end());
  EXPECT_NE(tight.body.find("### Results"), std::string::npos);
  EXPECT_TRUE(parse_metadata(tight.body));
}

}  // namespace
}  // namespace maxcode::bot
