#include "runner/report/html_report.h"

#include <gtest/gtest.h>

namespace maxcode {
namespace {

TrajectoryEntry entry(const std::string& id, Verdict v, double speedup) {
  TrajectoryEntry e;
  e.candidate.id = id;
  e.evaluation.candidate_id = id;
  e.evaluation.verdict = v;
  if (speedup > 0) {
    Timing t;
    t.speedup = {speedup, speedup * 0.95, speedup * 1.05, 10};
    e.evaluation.timing = t;
  }
  return e;
}

TEST(HtmlReport, PlotIsAStepOfTheBestSoFar) {
  SearchResult r;
  r.trajectory = {entry("a", Verdict::kFaster, 1.5), entry("b", Verdict::kIncorrect, 0),
                  entry("c", Verdict::kFaster, 1.2), entry("d", Verdict::kFaster, 2.0)};
  const std::string svg = render_progress_svg(r);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  std::size_t circles = 0;
  for (std::size_t at = svg.find("<circle"); at != std::string::npos; at = svg.find("<circle", at + 1)) ++circles;
  EXPECT_EQ(circles, 5u);  // the original plus four evaluations
  EXPECT_NE(svg.find("2.20x"), std::string::npos) << "top grid line at 1.1 x the best";
}

TEST(HtmlReport, EscapesEverythingFromCandidates) {
  RunInfo info;
  info.command = "optimize";
  info.target.function = "f<int>";
  SearchResult r;
  TrajectoryEntry e = entry("<script>", Verdict::kNotFaster, 1.0);
  e.evaluation.critique = "use <b>tiles</b> & more";
  r.trajectory = {e};
  const std::string html = render_html_report(info, r, "");
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
  EXPECT_NE(html.find("use &lt;b&gt;tiles&lt;/b&gt; &amp; more"), std::string::npos);
}

TEST(HtmlReport, StatesPrecisionAndTheAudit) {
  RunInfo info;
  info.command = "optimize";
  BenchmarkAudit audit;
  audit.benchmark = "main";
  audit.calls = 40;
  audit.findings = {"it prints only a summary <2 numbers>"};
  audit.call_check = "per-call times";
  info.audit = {audit};
  SearchResult r;
  Winner w;
  w.id = "fast.cpp";
  OutputError out;
  out.output = "out";
  out.type = "float";
  out.values = 100;
  out.max_ulp = 3;
  out.loose = true;
  out.note = "reduced precision";
  w.evaluation.precision = {out};
  r.winner = w;
  const std::string html = render_html_report(info, r, "");
  for (const std::string part : {"<h2>Precision against the original</h2>", "<td><code>out</code></td><td>float</td><td>100</td>",
                                 "Reduced precision: reduced precision", "<h2>Benchmark audit</h2>",
                                 "<li>it prints only a summary &lt;2 numbers&gt;</li>", "maxcode's own check: per-call times"})
    EXPECT_NE(html.find(part), std::string::npos) << "missing: " << part;
}

TEST(HtmlReport, StatesTheWitness) {
  SearchResult r;
  Winner w;
  w.id = "fast.cu";
  WitnessRecord witness;
  witness.status = WitnessStatus::kAgrees;
  witness.claimed_speedup = witness.expected_speedup = 2.35;
  witness.witness_speedup = 2.31;
  w.evaluation.witness = witness;
  r.winner = w;
  const std::string html = render_html_report(RunInfo{}, r, "");
  EXPECT_NE(html.find("Out-of-process witness: ncu 2.31x vs claimed 2.35x (agree within 25%)."), std::string::npos);
}

}  // namespace
}  // namespace maxcode
