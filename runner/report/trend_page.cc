#include "runner/report/trend_page.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "runner/report/html_report.h"
#include "runner/util/format.h"

namespace maxcode {

namespace {

// One line plot over nights; points that are absent (nan) are skipped. `flagged` marks
// nights drawn red (a regression arrived that night).
std::string line_plot(const std::string& title, const std::string& unit, const std::vector<std::string>& nights,
                      const std::vector<double>& values, const std::vector<bool>& flagged, const std::string& colour) {
  const int w = 540, h = 220, left = 64, right = 40, top = 28, bottom = 40;  // room for the last date
  double lo = 0, hi = 0;
  bool any = false;
  for (double v : values)
    if (v == v) {
      hi = any ? std::max(hi, v) : v;
      any = true;
    }
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h << "\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\" stroke=\"#ddd\"/>\n"
      << "<text x=\"" << left << "\" y=\"18\" font-size=\"13\" font-weight=\"bold\">" << html_escape(title)
      << "</text>\n";
  if (!any) return svg.str() + "<text x=\"" + std::to_string(left) + "\" y=\"110\" font-size=\"12\">no data</text></svg>\n";
  hi = hi <= 0 ? 1 : hi * 1.15;
  const std::size_t n = nights.size();
  auto x = [&](std::size_t i) { return n <= 1 ? (left + w - right) / 2.0 : left + (w - left - right) * double(i) / double(n - 1); };
  auto y = [&](double v) { return top + (h - top - bottom) * (1 - (v - lo) / (hi - lo)); };
  for (int k = 0; k <= 4; ++k) {
    const double v = lo + (hi - lo) * k / 4;
    svg << "<line x1=\"" << left << "\" x2=\"" << w - right << "\" y1=\"" << y(v) << "\" y2=\"" << y(v)
        << "\" stroke=\"#eee\"/>\n<text x=\"" << left - 6 << "\" y=\"" << y(v) + 4
        << "\" font-size=\"10\" text-anchor=\"end\">" << format_numbers(v < 10 ? "%.3g" : "%.0f", v) << "</text>\n";
  }
  std::string path;
  for (std::size_t i = 0; i < n; ++i) {
    if (values[i] != values[i]) continue;
    path += (path.empty() ? "M" : " L") + format_numbers("%.1f", x(i)) + "," + format_numbers("%.1f", y(values[i]));
  }
  svg << "<path d=\"" << path << "\" fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"2\"/>\n";
  for (std::size_t i = 0; i < n; ++i) {
    svg << "<text x=\"" << x(i) << "\" y=\"" << h - bottom + 16 << "\" font-size=\"10\" text-anchor=\"middle\">"
        << html_escape(nights[i]) << "</text>\n";
    if (values[i] != values[i]) continue;
    const bool red = i < flagged.size() && flagged[i];
    svg << "<circle cx=\"" << x(i) << "\" cy=\"" << y(values[i]) << "\" r=\"" << (red ? 6 : 3.5) << "\" fill=\""
        << (red ? "#cf222e" : colour) << "\"><title>" << html_escape(nights[i]) << ": "
        << format_numbers("%.4g", values[i]) << " " << html_escape(unit) << "</title></circle>\n";
  }
  svg << "<text x=\"14\" y=\"" << (top + h - bottom) / 2 << "\" font-size=\"10\" transform=\"rotate(-90 14 "
      << (top + h - bottom) / 2 << ")\" text-anchor=\"middle\">" << html_escape(unit) << "</text>\n</svg>\n";
  return svg.str();
}

// The regressions found, each with its commits.
void write_regressions(std::ostringstream& html, const std::vector<Regression>& regressions) {
  html << "<h2>Regressions (" << regressions.size() << ")</h2>\n";
  if (regressions.empty()) html << "<p>None found.</p>\n";
  for (const Regression& r : regressions) {
    html << "<div class=\"flag\"><b>regression</b>: <code>" << html_escape(r.target) << "</code> ("
         << html_escape(r.file) << ") in " << html_escape(r.repository) << ": own time "
         << format_numbers("%.2fx", r.growth) << " from " << html_escape(r.previous_night) << " to "
         << html_escape(r.night) << " (" << html_escape(regression_evidence(r)) << "); the original's benchmarks "
         << format_numbers("%.2fx", r.original_growth) << ". Commits <code>"
         << html_escape(r.previous_commit.substr(0, 10)) << "</code>..<code>" << html_escape(r.commit.substr(0, 10))
         << "</code>:<ul>";
    for (const std::string& c : r.commits) html << "<li><code>" << html_escape(c) << "</code></li>";
    if (r.commits.empty()) html << "<li>(not known)</li>";
    html << "</ul></div>\n";
  }
}

// One target's nights: three plots and a table, regressions flagged.
void write_series(std::ostringstream& html, const std::string& repository, const std::string& target,
                  std::vector<const NightResult*>& points, const std::vector<Regression>& regressions) {
  std::sort(points.begin(), points.end(), [](auto* a, auto* b) { return a->night < b->night; });
  std::vector<std::string> nights;
  std::vector<double> own, original, speedup;
  std::vector<bool> flagged;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const NightResult* p : points) {
    nights.push_back(p->night);
    own.push_back(p->self_ns > 0 ? p->self_ns / 1e6 : nan);
    original.push_back(p->original_s > 0 ? p->original_s * 1e3 : nan);
    speedup.push_back(p->speedup ? *p->speedup : 1.0);
    flagged.push_back(std::any_of(regressions.begin(), regressions.end(), [&](const Regression& r) {
      return r.repository == p->repository && r.target == p->target && r.night == p->night;
    }));
  }
  html << "<h2><code>" << html_escape(target) << "</code> — " << html_escape(repository) << "</h2>\n"
       << "<div class=\"plots\">" << line_plot("own time in the profile", "ms", nights, own, flagged, "#1f6feb")
       << line_plot("original's benchmarks (median)", "ms", nights, original, flagged, "#8250df")
       << line_plot("best confirmed speedup", "x", nights, speedup, {}, "#1a7f37") << "</div>\n";
  html << "<table><tr><th>night</th><th>commit</th><th>share</th><th>own time</th><th>original</th>"
          "<th>speedup (95% CI)</th><th>verdict</th><th>PR</th></tr>\n";
  for (const NightResult* p : points) {
    html << "<tr><td>" << html_escape(p->night) << "</td><td><code>" << html_escape(p->commit.substr(0, 10))
         << "</code></td><td>" << format_percent(p->share) << "</td><td>"
         << (p->self_ns > 0 ? format_numbers("%.1f ms", p->self_ns / 1e6) : "-") << "</td><td>"
         << (p->original_s > 0 ? format_numbers("%.1f ms", p->original_s * 1e3) : "-") << "</td><td>"
         << (p->speedup
                 ? format_numbers("%.3fx", *p->speedup) + " [" + format_numbers("%.3f", p->speedup_low.value_or(0)) +
                       ", " + format_numbers("%.3f", p->speedup_high.value_or(0)) + "]"
                 : "-")
         << "</td><td>" << html_escape(p->status) << "</td><td>";
    if (!p->pr_url.empty())
      html << "<a href=\"" << html_escape(p->pr_url) << "\">#" << p->pr_number << "</a> " << html_escape(p->pr_state);
    else
      html << html_escape(p->pr_state);
    html << "</td></tr>\n";
  }
  html << "</table>\n";
}

}  // namespace

std::string render_trend_page(const std::vector<NightResult>& rows, const std::vector<Regression>& regressions) {
  std::ostringstream html;
  html << "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>maxcode sweep: trend</title>\n"
          "<style>body{font-family:sans-serif;max-width:1150px;margin:2em auto;color:#222}"
          "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}"
          ".flag{background:#ffebe9;border:1px solid #cf222e;padding:.6em 1em;margin:.6em 0;border-radius:6px}"
          ".plots{display:flex;flex-wrap:wrap;gap:12px}</style></head><body>\n<h1>maxcode sweep: trend</h1>\n";
  std::vector<std::string> all_nights;
  for (const NightResult& r : rows) all_nights.push_back(r.night);
  std::sort(all_nights.begin(), all_nights.end());
  all_nights.erase(std::unique(all_nights.begin(), all_nights.end()), all_nights.end());
  html << "<p>" << all_nights.size() << " night(s)"
       << (all_nights.empty() ? "" : ", " + html_escape(all_nights.front()) + " to " + html_escape(all_nights.back()))
       << ". A regression is a hot function whose own time in the profile grew significantly from one night to "
          "the next, confirmed where the sweep could by measuring both commits side by side the same night.</p>\n";

  write_regressions(html, regressions);
  std::map<std::pair<std::string, std::string>, std::vector<const NightResult*>> series;
  for (const NightResult& r : rows) series[{r.repository, r.target}].push_back(&r);
  for (auto& [key, points] : series) write_series(html, key.first, key.second, points, regressions);
  html << "</body></html>\n";
  return html.str();
}

}  // namespace maxcode
