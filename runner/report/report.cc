#include "runner/report/report.h"

#include <cstdio>
#include <sstream>

#include "runner/evaluate/call_consistency.h"
#include "runner/util/files.h"
#include "runner/util/format.h"
#include "runner/report/html_report.h"
#include "runner/util/json_io.h"

namespace maxcode {

namespace {

std::string interval_text(const RatioInterval& s) {
  return fixed(s.median, 3) + "x [" + fixed(s.low, 3) + ", " + fixed(s.high, 3) + "]";
}

// Table cells must not break the Markdown table.
std::string cell(std::string text, std::size_t limit = 160) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  if (out.size() > limit) out = out.substr(0, limit) + "…";
  return out;
}

std::string fence(const std::string& text, const std::string& language = "") {
  std::string marker = "```";
  while (text.find(marker) != std::string::npos) marker += '`';
  return marker + language + "\n" + text + (text.empty() || text.back() == '\n' ? "" : "\n") + marker + "\n";
}

}  // namespace

nlohmann::json trajectory_line(const TrajectoryEntry& entry) {
  nlohmann::json j = to_json(entry.evaluation);
  j["step"] = entry.step;
  j["candidate"] = to_json(entry.candidate);
  return j;
}

RunResult run_result(const RunInfo& info, const SearchResult& result) {
  RunResult r;
  r.command = info.command;
  r.repository = {info.repository, info.commit, info.local_changes};
  r.target = info.target;
  r.policy = info.policy;
  r.environment = info.environment;
  r.settings = info.settings;
  r.noise = info.noise;
  for (const auto& entry : result.trajectory)
    r.candidates.push_back(
        {entry.step, entry.candidate.origin, entry.candidate.knobs, entry.candidate.note, entry.evaluation});
  if (result.winner) {
    const Evaluation& e = result.winner->evaluation;
    r.winner = ResultWinner{result.winner->id,
                            result.winner->confirmed,
                            e.timing ? std::optional(e.timing->speedup) : std::nullopt,
                            e.gpu,
                            e.precision,
                            e.call_check,
                            e.witness,
                            e.tests};
  }
  r.unconfirmed = result.unconfirmed;
  r.fatal = result.fatal;
  r.stop_reason = result.stop_reason;
  r.evaluations = result.evaluations;
  r.warnings = info.warnings;
  r.audit = info.audit;
  r.started_at = info.started_at;
  r.wall_s = info.wall_s;
  r.spend = result.spend;
  r.gpu = info.gpu;
  r.tests = info.tests;
  return r;
}

nlohmann::json result_to_json(const RunInfo& info, const SearchResult& result) {
  return to_json(run_result(info, result));
}

// The out-of-process witness's line and its figures (runner/core/witness_record.h).
static std::string witness_section(const WitnessRecord& w) {
  std::ostringstream md;
  md << (w.status == WitnessStatus::kNotWitnessed ? "**Not witnessed out of process:** " + w.note
                                                  : "Out-of-process " + describe(w))
     << ".";
  if (w.status != WitnessStatus::kNotWitnessed || w.original.ncu_launches > 0) {
    auto side = [](const char* name, const WitnessSide& s) {
      return std::string("| ") + name + " | " + std::to_string(s.ncu_launches) + " | " + fixed(s.ncu_ns * 1e-6, 3) +
             " | " + std::to_string(s.cupti_launches) + " | " + fixed(s.cupti_ns * 1e-6, 3) + " | " +
             fixed(s.agreement(), 3) + " | " + std::to_string(s.counted_launches) + " | " +
             fixed(s.ncu_counted_ns * 1e-6, 3) + " | " + fixed(s.cupti_counted_ns * 1e-6, 3) + " |\n";
    };
    md << " Per run of the kernel benchmarks, every kernel of every process, and the launches the timer counts"
          " (the claim is held against ncu's time on those):\n\n"
       << "| | ncu launches | ncu ms | CUPTI launches | CUPTI ms | ncu / CUPTI | counted launches | counted ncu ms"
          " | counted CUPTI ms |\n|---|---|---|---|---|---|---|---|---|\n"
       << side("original", w.original);
    if (w.status != WitnessStatus::kNotWitnessed) md << side("winner", w.candidate);
  }
  md << "\n\n";
  return md.str();
}

static std::string clock_range(const Timing& t) {
  unsigned low = 0, high = 0;
  for (const auto* side : {&t.baseline_sm_mhz, &t.candidate_sm_mhz})
    for (unsigned mhz : *side) {
      if (mhz == 0) continue;
      low = low == 0 ? mhz : std::min(low, mhz);
      high = std::max(high, mhz);
    }
  if (high == 0) return "unknown (no NVML)";
  return low == high ? std::to_string(high) + " MHz" : std::to_string(low) + "–" + std::to_string(high) + " MHz";
}

// Nsight Compute figures of the original's and the winner's top kernels.
static std::string gpu_metrics(const nlohmann::json& baseline, const nlohmann::json& winner) {
  if (!baseline.is_array() && !winner.is_array()) return "";
  std::ostringstream md;
  md << "### Nsight Compute (`ncu --clock-control none`, top kernels)\n\n"
        "| | kernel | time | DRAM % | SM % | occupancy (limit) | top stall | bytes moved | % of roofline |\n"
        "|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& [label, rows] : {std::pair{"original", &baseline}, std::pair{"winner", &winner}}) {
    if (!rows->is_array()) continue;
    for (const auto& k : *rows) {
      const auto stalls = k.value("stalls", nlohmann::json::array());
      std::string stall = stalls.empty() ? "" : stalls[0].value("reason", "");
      md << "| " << label << " | `" << cell(k.value("name", ""), 60) << "` | " << fixed(k.value("duration_ns", 0.0) / 1e3, 1)
         << " us | " << fixed(k.value("dram_throughput_pct", 0.0), 0) << " | " << fixed(k.value("sm_throughput_pct", 0.0), 0)
         << " | " << fixed(k.value("achieved_occupancy_pct", 0.0), 0) << "% (" << k.value("occupancy_limiter", "") << ") | "
         << stall << " | " << fixed(k.value("dram_bytes", 0.0) / 1e6, 1) << " MB | "
         << fixed(k.value("roofline_pct", 0.0), 0) << "% |\n";
    }
  }
  md << "\n";
  return md.str();
}

// The winner's largest error against the original, per output, and what the call
// check saw.
static std::string precision_section(const Evaluation& e) {
  if (e.precision.empty() && e.call_check.empty()) return "";
  std::ostringstream md;
  md << "### Precision against the original\n\n";
  if (!e.precision.empty()) {
    md << "| output | type | values | max relative error | 90th percentile | max ulp |\n|---|---|---|---|---|---|\n";
    for (const OutputError& p : e.precision) {
      char rel[32], p90[32];
      std::snprintf(rel, sizeof rel, "%.2g", p.max_relative);
      std::snprintf(p90, sizeof p90, "%.2g", p.p90_relative);
      md << "| `" << cell(p.output, 60) << "` | " << p.type << " | " << p.values << " | " << rel << " | "
         << (p.type == "text" ? "—" : p90) << " | " << (p.type == "text" ? "—" : fixed(p.max_ulp, 0)) << " |\n";
    }
    md << "\n";
    for (const OutputError& p : e.precision)
      if (p.loose) md << "**Reduced precision:** " << p.note << ".\n\n";
  }
  if (!e.call_check.empty()) md << "Call check: " << e.call_check << ".\n\n";
  return md.str();
}

// What the test frameworks reported on the original, and what candidates are held to.
static std::string tests_section(const nlohmann::json& tests, const SearchResult& result) {
  if (!tests.is_object() || tests.empty()) return "";
  std::ostringstream md;
  md << "## Tests\n\n";
  if (!tests.value("reported", false)) {
    md << "No test framework reported on the original's test run (no GoogleTest JSON, no ctest JUnit report): "
          "the tests were judged by the test command's exit code alone.\n\n";
    return md.str();
  }
  md << "The original's test run: " << tests.value("summary", "") << ". A candidate's test run fails when a test "
        "fails that passed on the original, when fewer tests run (filtered out, skipped, a program that wrote no "
        "report), whatever the test command's exit code.\n\n";
  const auto suites = tests.value("suites", nlohmann::json::array());
  if (!suites.empty()) {
    md << "| framework | program | suite | ran | passed | failed | skipped |\n|---|---|---|---|---|---|---|\n";
    std::size_t shown = 0;
    for (const auto& s : suites) {
      if (++shown > 50) {
        md << "| … | " << suites.size() - 50 << " more suite(s) in result.json | | | | | |\n";
        break;
      }
      md << "| " << cell(s.value("framework", ""), 20) << " | `" << cell(s.value("program", ""), 60) << "` | `"
         << cell(s.value("suite", ""), 80) << "` | " << s.value("ran", 0) << " | " << s.value("passed", 0) << " | "
         << s.value("failed", 0) << " | " << s.value("skipped", 0) << " |\n";
    }
    md << "\n";
  }
  if (result.winner && !result.winner->evaluation.tests.empty())
    md << "The winner's test run: " << result.winner->evaluation.tests.value("summary", "") << ".\n\n";
  return md.str();
}

// What the benchmark audit found, per benchmark.
static std::string audit_section(const std::vector<BenchmarkAudit>& audit) {
  if (audit.empty()) return "";
  std::ostringstream md;
  md << "## Benchmark audit\n\n";
  for (const BenchmarkAudit& a : audit) {
    md << "`" << a.benchmark << "`: " << a.calls << " call(s) of the target per run.\n\n";
    for (const std::string& finding : a.findings) md << "- " << finding << "\n";
    md << "- maxcode's own check: " << a.call_check << "\n\n";
  }
  return md.str();
}

// The winner: its confirmed speedup, why it counts, what the GPU saw, its precision and patch.
std::string winner_section(const RunInfo& info, const SearchResult& result, const std::string& patch) {
  std::ostringstream md;
  const Timing& t = result.winner->confirmed;
  md << "**Winner: `" << result.winner->id << "` — " << fixed(t.speedup.median, 2)
     << "x faster** (confirmed in a fresh A/B session: 95% interval " << fixed(t.speedup.low, 3) << "–"
     << fixed(t.speedup.high, 3) << ", " << t.speedup.rounds << " rounds).\n\n";
  md << "| | median time | \n|---|---|\n| original | " << fixed(t.baseline_median_s, 4) << " s |\n| winner | "
     << fixed(t.candidate_median_s, 4) << " s |\n\n";
  md << "The speedup is the median of the per-round ratios (each round times both sides); the interval is the "
        "wider of a sign-test interval and a block bootstrap of those ratios.\n\n";
  md << "The speedup counts because its lower bound " << fixed(t.speedup.low, 3) << " exceeds both the minimum ("
     << fixed(t.min_speedup, 2) << ") and the A/A noise floor (" << fixed(t.noise_floor, 3) << ").\n\n";
  if (t.roofline_floor_s > 0)
    md << "Roofline: the declared minimum work takes " << fixed(t.roofline_floor_s * 1e3, 4)
       << " ms at the GPU's peak rates: the original ran at "
       << fixed(100 * t.roofline_floor_s / t.baseline_median_s, 1) << "% of roofline, the winner at "
       << fixed(100 * t.roofline_floor_s / t.candidate_median_s, 1) << "%.\n\n";
  if (!t.entries.empty()) {
    // A Google Benchmark program: the metric is the sum of its entries' times per
    // iteration; which of them moved.
    md << "Per benchmark entry (median time per iteration over the confirming rounds):\n\n"
          "| benchmark | entry | original | winner | speedup |\n|---|---|---|---|---|\n";
    for (const Timing::Entry& e : t.entries)
      md << "| " << cell(e.benchmark, 80) << " | `" << cell(e.name, 120) << "` | "
         << format_duration(e.baseline_median_s) << " | " << format_duration(e.candidate_median_s) << " | "
         << (e.candidate_median_s > 0 ? fixed(e.baseline_median_s / e.candidate_median_s, 3) + "x" : "-") << " |\n";
    md << "\n";
  }
  if (const auto& w = result.winner->evaluation.witness) md << witness_section(*w);
  if (!t.device.empty())
    md << "Timed on " << t.device << " (kernel time from CUPTI records on every stream); SM clock under load "
       << clock_range(t) << "; " << t.throttled_rounds() << " of " << t.throttled.size()
       << " rounds with the clock held down.\n\n";
  if (const std::string note = t.contention_note(); !note.empty()) md << note << "\n\n";
  md << gpu_metrics(info.gpu.is_object() ? info.gpu.value("baseline_ncu", nlohmann::json()) : nlohmann::json(),
                    result.winner->evaluation.gpu.value("ncu", nlohmann::json()));
  md << precision_section(result.winner->evaluation);
  if (!patch.empty()) md << "### Patch (`patch.diff`)\n\n" << fence(patch, "diff") << "\n";
  return md.str();
}

std::string candidates_section(const SearchResult& result) {
  std::ostringstream md;
  md << "## Candidates\n\n| # | candidate | verdict | speedup [95% CI] | reason |\n|---|---|---|---|---|\n";
  int n = 0;
  for (const auto& entry : result.trajectory) {
    const Evaluation& e = entry.evaluation;
    md << "| " << ++n << " | `" << cell(e.candidate_id, 60) << "` | " << verdict_name(e.verdict) << " | "
       << (e.timing ? interval_text(e.timing->speedup) : "—") << " | " << cell(e.reason) << " |\n";
  }
  md << "\n";
  return md.str();
}

std::string critiques_section(const SearchResult& result) {
  std::ostringstream md;
  bool critiques = false;
  for (const auto& entry : result.trajectory) {
    const Evaluation& e = entry.evaluation;
    if (e.critique.empty() || e.duplicate_of) continue;
    if (!critiques) md << "## Critiques\n\nModel- or rule-written diagnoses of each attempt, as the next step saw them.\n\n";
    critiques = true;
    md << "- `" << cell(e.candidate_id, 60) << "` (" << e.critic << "): " << cell(e.critique, 1500) << "\n";
  }
  if (critiques) md << "\n";
  return md.str();
}

// The evidence of each failed candidate: compiler or test output, the mismatch, a step's tail.
std::string failures_section(const SearchResult& result) {
  std::ostringstream md;
  bool details = false;
  for (const auto& entry : result.trajectory) {
    const Evaluation& e = entry.evaluation;
    std::string evidence = !e.compiler_output.empty() ? e.compiler_output
                           : !e.test_output.empty()   ? e.test_output
                           : !e.mismatch.empty()      ? e.mismatch
                                                      : "";
    if (evidence.empty() && e.verdict != Verdict::kFaster && e.verdict != Verdict::kNotFaster)
      for (const auto& step : e.steps)
        if (!step.output_tail.empty()) evidence = step.output_tail;
    if (evidence.empty()) continue;
    if (!details) md << "## Failures in detail\n\n";
    details = true;
    md << "<details><summary><code>" << cell(e.candidate_id, 80) << "</code>: " << verdict_name(e.verdict)
       << "</summary>\n\n" << fence(evidence) << "\n</details>\n\n";
  }
  return md.str();
}

// How timing was done, with the A/A session's figures.
std::string measurement_section(const RunInfo& info) {
  std::ostringstream md;
  if (info.noise) {
    md << "## Measurement\n\n";
    md << "Each candidate's benchmarks ran in interleaved A/B rounds against the original, in random order per round, "
          "after warm-up. Speedup = the median over rounds of original time / candidate time; the 95% interval is "
          "the wider of the order-statistic interval of that median and a moving-block bootstrap interval; a "
          "session whose first and second halves disagree is not stopped early. A/A run (original against "
          "itself): "
       << interval_text(info.noise->speedup) << ", noise floor " << fixed(info.noise->noise_floor, 3) << ".";
    if (info.noise->process_floor_s > 0)
      md << " Each benchmark run's wall time is taken inside the sandbox, less the cost of starting a program ("
         << fixed(info.noise->process_floor_s * 1e3, 2) << " ms, the fastest of 7 timed runs of /bin/true).";
    md << "\n\n";
  }
  return md.str();
}

std::string render_report(const RunInfo& info, const SearchResult& result, const std::string& patch) {
  std::ostringstream md;
  md << "# maxcode " << info.command << ": `" << info.target.function << "`\n\n";
  md << "Target: `" << info.target.file << ":" << info.target.line_begin << "` — `" << cell(info.target.signature, 200)
     << "`  \n";
  md << "Repository: `" << info.repository << "`"
     << (info.commit.empty() ? "" : " at `" + info.commit.substr(0, 12) + "`")
     << (info.local_changes.empty() ? "" : " with " + std::to_string(info.local_changes.size()) + " local change(s)")
     << "  \nPolicy: `" << info.policy << "`, " << result.evaluations << " candidate(s) evaluated in "
     << fixed(result.wall_s, 1) << " s; stopped: " << result.stop_reason << "\n\n";

  if (result.fatal) md << "**Stopped by an error:** " << *result.fatal << "\n\n";
  md << "## Result\n\n";
  if (result.winner) {
    md << winner_section(info, result, patch);
  } else {
    md << "**No winner.** No candidate was significantly faster than the original";
    if (result.unconfirmed) md << " (" << *result.unconfirmed << ")";
    md << ".\n\n";
  }

  md << candidates_section(result) << critiques_section(result) << failures_section(result)
     << measurement_section(info);
  md << tests_section(info.tests, result);
  md << audit_section(info.audit);
  if (!info.warnings.empty()) {
    md << "## Warnings\n\n";
    for (const auto& w : info.warnings) md << "- " << w << "\n";
    md << "\n";
  }
  md << "## Environment\n\n";
  for (const auto& [key, value] : info.environment.items())
    md << "- " << key << ": " << (value.is_string() ? value.get<std::string>() : dump_json(value)) << "\n";
  return md.str();
}

void write_outputs(const std::filesystem::path& out, const RunInfo& info, const SearchResult& result,
                   const std::string& patch) {
  std::filesystem::create_directories(out);
  write_text(out / "result.json", dump_json(result_to_json(info, result), 2) + "\n");
  write_text(out / "report.md", render_report(info, result, patch));
  write_text(out / "report.html", render_html_report(info, result, patch));
  std::error_code ignored;
  std::filesystem::remove(out / "patch.diff", ignored);
  if (!patch.empty()) write_text(out / "patch.diff", patch);
}

}  // namespace maxcode
