// What report.md and result.json say about a winner's precision, its out-of-process
// witness and the benchmark audit (the rest of the report is covered through cli_test and html_report_test).
#include "runner/report/report.h"

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace maxcode {
namespace {

SearchResult with_winner(std::vector<OutputError> precision) {
  SearchResult result;
  Winner w;
  w.id = "06-interior-fast-path.cpp";
  w.confirmed.speedup = {5.8, 5.1, 6.5, 40};
  w.confirmed.baseline_median_s = 0.3;
  w.confirmed.candidate_median_s = 0.05;
  w.evaluation.candidate_id = w.id;
  w.evaluation.verdict = Verdict::kFaster;
  w.evaluation.precision = std::move(precision);
  w.evaluation.call_check = "'main': 40 calls, per-call times alike";
  result.winner = w;
  return result;
}

RunInfo info_with_audit() {
  RunInfo info;
  info.command = "optimize";
  info.target.function = "blur";
  BenchmarkAudit audit;
  audit.benchmark = "main";
  audit.calls = 40;
  audit.findings = {"it prints only a summary (2 number(s)): a wrong result can match it by chance"};
  audit.call_check = "per-call times, inputs perturbed and outputs poisoned";
  info.audit = {audit};
  return info;
}

TEST(Report, StatesTheWinnersPrecisionAndTheAudit) {
  OutputError out;
  out.output = "out";
  out.type = "float";
  out.values = 6291456;
  out.max_relative = 3.1e-4;
  out.p90_relative = 2.9e-4;
  out.max_ulp = 5200;
  out.loose = true;
  out.note = "90% of the values of 'out' are off by up to 2.90e-04 relative";
  const SearchResult result = with_winner({out});
  const std::string md = render_report(info_with_audit(), result, "");
  for (const std::string part : {"### Precision against the original", "| `out` | float | 6291456 | 0.00031 | 0.00029 | 5200 |",
                                 "**Reduced precision:** 90% of the values", "Call check: 'main': 40 calls",
                                 "## Benchmark audit", "`main`: 40 call(s) of the target per run.",
                                 "- it prints only a summary", "- maxcode's own check: per-call times"})
    EXPECT_NE(md.find(part), std::string::npos) << "missing: " << part << "\n" << md;

  const nlohmann::json j = result_to_json(info_with_audit(), result);
  EXPECT_EQ(j["audit"][0]["calls"], 40);
  EXPECT_EQ(j["winner"]["precision"][0]["max_ulp_error"], 5200);
  EXPECT_EQ(j["winner"]["precision"][0]["loose"], true);
  EXPECT_EQ(j["winner"]["call_check"], "'main': 40 calls, per-call times alike");
}

TEST(Report, NoPrecisionSectionWithoutFigures) {
  SearchResult result = with_winner({});
  result.winner->evaluation.call_check.clear();
  EXPECT_EQ(render_report(RunInfo{}, result, "").find("Precision against"), std::string::npos);
}

TEST(Report, StatesTheWitnessBesideTheClaim) {
  SearchResult result = with_winner({});
  WitnessRecord w;
  w.status = WitnessStatus::kAgrees;
  w.tolerance = 0.25;
  w.original = {40, 23.1e6, 40, 21.0e6};
  w.candidate = {40, 10.0e6, 40, 8.8e6};
  w.claimed_speedup = w.expected_speedup = 2.35;
  w.counted_share = 1;
  w.witness_speedup = 2.31;
  result.winner->evaluation.witness = w;
  const std::string md = render_report(RunInfo{}, result, "");
  EXPECT_NE(md.find("Out-of-process witness: ncu 2.31x vs claimed 2.35x (agree within 25%)."), std::string::npos) << md;
  EXPECT_NE(md.find("| original | 40 | 23.100 | 40 | 21.000 | 1.100 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| winner | 40 | 10.000 | 40 | 8.800 | 1.136 |"), std::string::npos) << md;
  const nlohmann::json j = result_to_json(RunInfo{}, result);
  EXPECT_EQ(j["winner"]["witness"]["status"], "agrees");
  EXPECT_EQ(j["winner"]["witness"]["witness_speedup"], 2.31);
  EXPECT_EQ(j["winner"]["witness"]["candidate"]["ncu_launches"], 40);

  // No ncu on the machine: the report says the winner was not witnessed, and why.
  WitnessRecord none;
  none.status = WitnessStatus::kNotWitnessed;
  none.note = "Nsight Compute (ncu) not found";
  result.winner->evaluation.witness = none;
  const std::string bare = render_report(RunInfo{}, result, "");
  EXPECT_NE(bare.find("**Not witnessed out of process:** Nsight Compute (ncu) not found."), std::string::npos) << bare;
  EXPECT_EQ(bare.find("| ncu launches"), std::string::npos);
}

// Bytes that are not UTF-8 in test output, compiler output, candidate code and reasons
// (issue 22, point 8): every output is written, each such byte as U+FFFD, where a plain
// dump() threw type_error.316 and the run ended with no result.json.
TEST(Report, OutputThatIsNotUtf8StillWritesEveryFile) {
  testing::TempDir dir;
  SearchResult result;
  TrajectoryEntry e;
  e.step = 1;
  e.candidate.id = "bytes.cpp";
  e.candidate.definition = "int f() { return \"\xff\"[0]; }";
  e.candidate.rationale = "because \xc3";
  e.evaluation.candidate_id = "bytes.cpp";
  e.evaluation.verdict = Verdict::kIncorrect;
  e.evaluation.reason = "tests failed: \xfe\xff";
  e.evaluation.test_output = "FAILED \x80\x81\x82";
  e.evaluation.compiler_output = "warning: \xed\xa0\x80";
  e.evaluation.code = *e.candidate.definition;
  e.evaluation.steps.push_back({"test", "./test \xff", "exit code 1", 0.1, "tail \xff"});
  result.trajectory = {e};
  result.evaluations = 1;
  result.stop_reason = "budget \xff";
  RunInfo info = info_with_audit();
  info.warnings = {"warning \xfe"};
  info.environment = {{"compiler", "g++ \xff"}};
  write_outputs(dir.path(), info, result, "");
  const nlohmann::json j = nlohmann::json::parse(testing::read_file(dir / "result.json"));
  EXPECT_EQ(j["candidates"][0]["id"], "bytes.cpp");
  EXPECT_NE(j.dump().find("tests failed: \xEF\xBF\xBD\xEF\xBF\xBD"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir / "report.md"));
  EXPECT_TRUE(std::filesystem::exists(dir / "report.html"));
  EXPECT_NO_THROW(trajectory_line(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace
}  // namespace maxcode
