#include "bot/service/operations/dashboard.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "runner/util/html_escape.h"
#include "runner/util/format.h"

namespace maxcode::bot::service {

namespace {

std::string ago(double then, double now) {
  if (then <= 0) return "never";
  const double s = now - then;
  if (s < 120) return format_numbers("%.0f s ago", s);
  if (s < 7200) return format_numbers("%.0f min ago", s / 60);
  return format_numbers("%.1f h ago", s / 3600);
}

// Confirmed speedups of the targets a job delivered, from its stored result.
std::vector<std::pair<std::string, double>> speedups(const std::vector<Job>& jobs) {
  std::vector<std::pair<std::string, double>> out;
  for (auto it = jobs.rbegin(); it != jobs.rend(); ++it) {
    for (const auto& [target, value] : it->result.speedups)
      out.push_back({"#" + std::to_string(it->id) + " " + target, value});
  }
  if (out.size() > 40) out.erase(out.begin(), out.end() - 40);
  return out;
}

// How long a job took: finished - started (running so far for a running job).
std::string duration(const Job& j, double now) {
  if (j.started_at <= 0) return "";
  const double s = (j.finished_at > 0 ? j.finished_at : now) - j.started_at;
  std::string text = s < 120 ? format_numbers("%.0f s", s) : s < 7200 ? format_numbers("%.1f min", s / 60) : format_numbers("%.1f h", s / 3600);
  return j.finished_at > 0 ? text : text + " so far";
}

// "1.42x fn" per delivered target of the job.
std::string job_speedups(const Job& j) {
  std::string text;
  for (const auto& [target, value] : j.result.speedups)
    text += (text.empty() ? "" : "<br>") + format_numbers("%.2fx ", value) + html_escape(target);
  return text;
}

std::string plot(const std::vector<std::pair<std::string, double>>& points) {
  if (points.empty()) return "<p class=muted>No delivered results yet.</p>";
  const double width = 1100, height = 220, left = 50, bottom = 30;
  double top_value = 1.5;
  for (const auto& p : points) top_value = std::max(top_value, p.second * 1.1);
  const double bar = std::min(80.0, (width - left) / points.size());
  auto y = [&](double v) { return height - bottom - (v / top_value) * (height - bottom - 10); };
  std::string svg = "<svg width='" + format_numbers("%.0f", width) + "' height='" + format_numbers("%.0f", height) +
                    "' role='img' aria-label='confirmed speedups'>";
  for (double v = 0; v <= top_value; v += top_value > 4 ? 1 : 0.5)
    svg += "<line x1='" + format_numbers("%.0f", left) + "' x2='" + format_numbers("%.0f", width) + "' y1='" + format_numbers("%.1f", y(v)) + "' y2='" +
           format_numbers("%.1f", y(v)) + "' class=grid /><text x='4' y='" + format_numbers("%.1f", y(v) + 4) + "'>" + format_numbers("%.1fx", v) + "</text>";
  svg += "<line x1='" + format_numbers("%.0f", left) + "' x2='" + format_numbers("%.0f", width) + "' y1='" + format_numbers("%.1f", y(1)) + "' y2='" +
         format_numbers("%.1f", y(1)) + "' class=one />";
  for (std::size_t i = 0; i < points.size(); ++i) {
    const double x = left + i * bar + bar * 0.15, v = points[i].second;
    svg += "<rect x='" + format_numbers("%.1f", x) + "' y='" + format_numbers("%.1f", y(v)) + "' width='" + format_numbers("%.1f", bar * 0.7) +
           "' height='" + format_numbers("%.1f", y(0) - y(v)) + "'><title>" + html_escape(points[i].first) + ": " + format_numbers("%.2fx", v) +
           "</title></rect><text x='" + format_numbers("%.1f", x) + "' y='" + format_numbers("%.1f", y(v) - 4) + "'>" + format_numbers("%.2fx", v) +
           "</text><text x='" + format_numbers("%.1f", x) + "' y='" + format_numbers("%.0f", height - 10) + "'>" +
           html_escape(points[i].first.substr(0, 18)) + "</text>";
  }
  return svg + "</svg>";
}

}  // namespace

std::string render_dashboard(const std::vector<Job>& jobs, const std::vector<RunnerInfo>& runners,
                             const std::map<std::string, int>& counts, double now,
                             const std::function<std::string(const Job&)>& job_link, double runner_window_s) {
  // Reloads itself: an operator keeps it open while jobs move.
  std::string h =
      "<!doctype html><html><head><meta charset='utf-8'><meta http-equiv='refresh' content='30'>"
      "<title>maxcode service</title><style>"
      "body{font:14px system-ui,sans-serif;margin:24px;color:#1b1f24}h1{font-size:20px}h2{font-size:16px;margin-top:28px}"
      "table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #d8dee4;padding:4px 8px;text-align:left;"
      "vertical-align:top}th{background:#f6f8fa}.muted{color:#656d76}.state{font-weight:600}.queued{color:#9a6700}"
      ".running,.delivering{color:#0969da}.done{color:#1a7f37}.failed{color:#cf222e}.cancelled{color:#656d76}"
      ".chips span{display:inline-block;margin-right:12px;padding:4px 10px;border-radius:12px;background:#f6f8fa}"
      "svg text{font-size:11px;fill:#444}svg rect{fill:#2da44e}svg .grid{stroke:#eee}svg .one{stroke:#cf222e;"
      "stroke-dasharray:4}</style></head><body><h1>maxcode service</h1><div class=chips>";
  for (const auto& [state, n] : counts)
    h += "<span class='" + html_escape(state) + "'>" + html_escape(state) + ": <b>" + std::to_string(n) + "</b></span>";
  h += "</div><h2>Confirmed speedups of delivered results</h2>" + plot(speedups(jobs));
  h += "<h2>Jobs</h2><table><tr><th>id</th><th>repository</th><th>target</th><th>commit</th><th>trigger</th>"
       "<th>state</th><th>attempts</th><th>runner</th><th>speedup</th><th>duration</th><th>result</th><th>created</th></tr>";
  for (const Job& j : jobs) {
    std::string result = j.pr_url.empty() ? html_escape(j.summary.empty() ? j.error : j.summary.substr(0, 300))
                                          : "<a href='" + html_escape(j.pr_url) + "'>" + html_escape(j.pr_url) + "</a>";
    h += "<tr><td><a href='" + html_escape(job_link(j)) + "'>" + std::to_string(j.id) + "</a></td><td>" +
         html_escape(j.repo) + "</td><td>" + html_escape(j.target.empty() ? "(top targets)" : j.target) +
         "</td><td><code>" + html_escape(j.commit.substr(0, 7)) + "</code></td><td>" + html_escape(j.trigger) +
         "</td><td class='state " + job_state_name(j.state) + "'>" + job_state_name(j.state) + "</td><td>" +
         std::to_string(j.attempts) + "/" + std::to_string(j.max_attempts) + "</td><td>" + html_escape(j.runner) +
         "</td><td>" + job_speedups(j) + "</td><td>" + duration(j, now) + "</td><td>" + result +
         "</td><td class=muted>" + ago(j.created_at, now) + "</td></tr>";
  }
  if (jobs.empty()) h += "<tr><td colspan=12 class=muted>No jobs yet.</td></tr>";
  h += "</table><h2>Runners</h2><table><tr><th>runner</th><th>labels</th><th>last heartbeat</th><th>job</th></tr>";
  // A runner that stopped (its machine shut down, renamed) would stay listed forever:
  // only those heard from within the window are shown.
  std::size_t gone = 0;
  for (const RunnerInfo& r : runners) {
    if (now - r.last_seen > runner_window_s) {
      ++gone;
      continue;
    }
    std::string labels;
    for (const auto& l : r.labels) labels += (labels.empty() ? "" : ", ") + l;
    h += "<tr><td>" + html_escape(r.name) + "</td><td>" + html_escape(labels) + "</td><td>" + ago(r.last_seen, now) +
         "</td><td>" + (r.job_id ? std::to_string(r.job_id) : "idle") + "</td></tr>";
  }
  if (runners.size() == gone)
    h += "<tr><td colspan=4 class=muted>" + std::string(runners.empty() ? "No runner has connected." : "No runner is connected.") +
         "</td></tr>";
  h += "</table>";
  if (gone > 0)
    h += "<p class=muted>" + std::to_string(gone) + " runner" + (gone == 1 ? "" : "s") + " not heard from for more than " +
         format_numbers("%.0f", runner_window_s) + " s (one lease period) not shown.</p>";
  return h + "</body></html>\n";
}

}  // namespace maxcode::bot::service
