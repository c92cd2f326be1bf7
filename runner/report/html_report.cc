#include "runner/util/format.h"
#include "runner/report/html_report.h"
#include "runner/util/json_io.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <vector>

namespace maxcode {

namespace {

constexpr const char* kStyle = R"(
body { font: 15px/1.5 system-ui, sans-serif; max-width: 70em; margin: 2em auto; padding: 0 1em; color: #222; }
table { border-collapse: collapse; width: 100%; } td, th { border: 1px solid #ddd; padding: .3em .5em; vertical-align: top; }
th { background: #f4f4f4; text-align: left; } code, pre { font-family: ui-monospace, monospace; font-size: 13px; }
pre { background: #f7f7f7; padding: .7em; overflow-x: auto; } .faster { color: #11772d; font-weight: 600; }
.incorrect, .crashed, .timeout, .limit, .compile-error, .test-failed, .rejected { color: #a31515; }
.critique { color: #444; font-style: italic; } .note { color: #666; }
)";

}  // namespace

std::string render_progress_svg(const SearchResult& result) {
  // Best reward after each evaluated (non-duplicate) candidate; 1.0 = the original.
  std::vector<double> best{1.0};
  for (const auto& entry : result.trajectory) {
    if (entry.evaluation.duplicate_of) continue;
    best.push_back(std::max(best.back(), std::max(1.0, entry.evaluation.reward())));
  }
  const double w = 640, h = 280, left = 50, right = 20, top = 20, bottom = 40;
  const double ymax = std::max(1.1, best.back() * 1.1);
  const double n = std::max<double>(1, static_cast<double>(best.size() - 1));
  auto x = [&](double i) { return left + (w - left - right) * i / n; };
  auto y = [&](double v) { return top + (h - top - bottom) * (1 - (v - 1.0) / (ymax - 1.0)); };
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h
      << "\" role=\"img\" aria-label=\"best speedup against evaluations\">\n";
  svg << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  for (int t = 0; t <= 4; ++t) {  // horizontal grid with labels
    const double v = 1.0 + (ymax - 1.0) * t / 4;
    svg << "<line x1=\"" << left << "\" x2=\"" << w - right << "\" y1=\"" << y(v) << "\" y2=\"" << y(v)
        << "\" stroke=\"#e5e5e5\"/><text x=\"" << left - 6 << "\" y=\"" << y(v) + 4
        << "\" font-size=\"11\" text-anchor=\"end\">" << fixed(v) << "x</text>\n";
  }
  std::string path;
  for (std::size_t i = 0; i < best.size(); ++i) {  // a step plot: the best holds until beaten
    if (i > 0) path += " L" + fixed(x(static_cast<double>(i)), 1) + "," + fixed(y(best[i - 1]), 1);
    path += (i ? " L" : "M") + fixed(x(static_cast<double>(i)), 1) + "," + fixed(y(best[i]), 1);
  }
  svg << "<path d=\"" << path << "\" fill=\"none\" stroke=\"#1f6feb\" stroke-width=\"2\"/>\n";
  for (std::size_t i = 0; i < best.size(); ++i)
    svg << "<circle cx=\"" << x(static_cast<double>(i)) << "\" cy=\"" << y(best[i]) << "\" r=\"3\" fill=\"#1f6feb\"/>\n";
  svg << "<line x1=\"" << left << "\" x2=\"" << w - right << "\" y1=\"" << h - bottom << "\" y2=\"" << h - bottom
      << "\" stroke=\"#999\"/>\n";
  svg << "<text x=\"" << (left + w - right) / 2 << "\" y=\"" << h - 8
      << "\" font-size=\"12\" text-anchor=\"middle\">evaluations (0 = the original)</text>\n";
  svg << "<text x=\"" << x(0) << "\" y=\"" << h - bottom + 14 << "\" font-size=\"11\" text-anchor=\"middle\">0</text>\n";
  svg << "<text x=\"" << x(n) << "\" y=\"" << h - bottom + 14 << "\" font-size=\"11\" text-anchor=\"middle\">"
      << best.size() - 1 << "</text>\n";
  svg << "</svg>\n";
  return svg.str();
}

namespace {

// The winner and its confirmed interval, or why there is none.
void write_outcome(std::ostringstream& html, const SearchResult& result) {
  if (result.winner) {
    const auto& s = result.winner->confirmed.speedup;
    html << "<p class=\"faster\">Winner <code>" << html_escape(result.winner->id) << "</code>: " << fixed(s.median)
         << "x faster, confirmed in a fresh A/B session (95% interval " << fixed(s.low, 3) << "–" << fixed(s.high, 3)
         << ", " << s.rounds << " rounds).</p>\n";
    if (const auto& w = result.winner->evaluation.witness)
      html << "<p class=\"note\">Out-of-process " << html_escape(describe(*w)) << ".</p>\n";
  } else {
    html << "<p><strong>No winner.</strong>"
         << (result.unconfirmed ? " " + html_escape(*result.unconfirmed) : std::string()) << "</p>\n";
  }
  if (result.fatal) html << "<p class=\"incorrect\">Stopped by an error: " << html_escape(*result.fatal) << "</p>\n";
}

// Every candidate in the order evaluated: verdict, interval, reason and critique.
void write_candidates(std::ostringstream& html, const SearchResult& result) {
  html << "<h2>Candidates</h2>\n<table><tr><th>#</th><th>candidate</th><th>verdict</th><th>speedup [95% CI]</th>"
          "<th>reason and critique</th></tr>\n";
  int n = 0;
  for (const auto& entry : result.trajectory) {
    const Evaluation& e = entry.evaluation;
    const std::string verdict = verdict_name(e.verdict);
    html << "<tr><td>" << ++n << "</td><td><code>" << html_escape(e.candidate_id) << "</code></td><td class=\""
         << verdict << "\">" << verdict << "</td><td>"
         << (e.timing ? fixed(e.timing->speedup.median, 3) + "x [" + fixed(e.timing->speedup.low, 3) + ", " +
                            fixed(e.timing->speedup.high, 3) + "]"
                      : "—")
         << "</td><td>" << html_escape(e.reason);
    if (!e.critique.empty())
      html << "<div class=\"critique\">Critique (" << html_escape(e.critic) << "): " << html_escape(e.critique) << "</div>";
    html << "</td></tr>\n";
  }
  html << "</table>\n";
}

// The winner's outputs against the original's, per output.
void write_precision(std::ostringstream& html, const SearchResult& result) {
  if (result.winner && !result.winner->evaluation.precision.empty()) {
    html << "<h2>Precision against the original</h2>\n<table><tr><th>output</th><th>type</th><th>values</th>"
            "<th>max relative error</th><th>max ulp</th></tr>\n";
    for (const OutputError& p : result.winner->evaluation.precision) {
      char rel[32];
      std::snprintf(rel, sizeof rel, "%.2g", p.max_relative);
      html << "<tr><td><code>" << html_escape(p.output) << "</code></td><td>" << html_escape(p.type) << "</td><td>"
           << p.values << "</td><td>" << rel << "</td><td>" << (p.type == "text" ? "—" : fixed(p.max_ulp, 0))
           << "</td></tr>\n";
    }
    html << "</table>\n";
    for (const OutputError& p : result.winner->evaluation.precision)
      if (p.loose) html << "<p class=\"incorrect\">Reduced precision: " << html_escape(p.note) << "</p>\n";
  }
}

// What the benchmark can and cannot catch, per benchmark.
void write_audit(std::ostringstream& html, const RunInfo& info) {
  if (!info.audit.empty()) {
    html << "<h2>Benchmark audit</h2>\n";
    for (const BenchmarkAudit& a : info.audit) {
      html << "<p><code>" << html_escape(a.benchmark) << "</code>: " << a.calls
           << " call(s) of the target per run.</p><ul>";
      for (const std::string& finding : a.findings) html << "<li>" << html_escape(finding) << "</li>";
      html << "<li>maxcode's own check: " << html_escape(a.call_check) << "</li></ul>\n";
    }
  }
}

void write_warnings_and_environment(std::ostringstream& html, const RunInfo& info) {
  if (!info.warnings.empty()) {
    html << "<h2>Warnings</h2><ul>";
    for (const auto& w : info.warnings) html << "<li>" << html_escape(w) << "</li>";
    html << "</ul>\n";
  }
  html << "<h2>Environment</h2><ul>";
  for (const auto& [key, value] : info.environment.items())
    html << "<li>" << html_escape(key) << ": " << html_escape(value.is_string() ? value.get<std::string>() : dump_json(value))
         << "</li>";
  html << "</ul>\n";
}

}  // namespace

std::string render_html_report(const RunInfo& info, const SearchResult& result, const std::string& patch) {
  std::ostringstream html;
  html << "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>maxcode: "
       << html_escape(info.target.function) << "</title><style>" << kStyle << "</style></head><body>\n";
  html << "<h1>maxcode " << html_escape(info.command) << ": <code>" << html_escape(info.target.function)
       << "</code></h1>\n<p class=\"note\"><code>" << html_escape(info.target.file) << ":" << info.target.line_begin
       << "</code> — policy <code>" << html_escape(info.policy) << "</code>, " << result.evaluations
       << " candidate(s) evaluated; stopped: " << html_escape(result.stop_reason) << "</p>\n";
  write_outcome(html, result);
  if (result.fatal) html << "<p class=\"incorrect\">Stopped by an error: " << html_escape(*result.fatal) << "</p>\n";
  html << "<h2>Best speedup against evaluations</h2>\n" << render_progress_svg(result);
  write_candidates(html, result);
  write_precision(html, result);
  write_audit(html, info);
  if (!patch.empty()) html << "<h2>Patch</h2>\n<pre>" << html_escape(patch) << "</pre>\n";
  write_warnings_and_environment(html, info);
  html << "</body></html>\n";
  return html.str();
}

}  // namespace maxcode
