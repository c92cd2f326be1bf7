// What report.md and result.json say about a winner's precision and the benchmark
// audit (the rest of the report is covered through cli_test and html_report_test).
#include "runner/report/report.h"

#include <gtest/gtest.h>

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
  info.audit = nlohmann::json::array({{{"benchmark", "main"},
                                       {"calls", 40},
                                       {"findings", {"it prints only a summary (2 number(s)): a wrong result can match it by chance"}},
                                       {"call_check", "per-call times, inputs perturbed and outputs poisoned"}}});
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

}  // namespace
}  // namespace maxcode
