#include "runner/job/job_report.h"

#include <cstdio>
#include <sstream>

#include "runner/report/html_report.h"
#include "runner/util/files.h"
#include "runner/util/format.h"

namespace maxcode {

namespace fs = std::filesystem;

namespace {

std::string speedup_text(const TargetRecord& t) {
  if (!t.speedup) return "-";
  return format_numbers("%.3fx", t.speedup->median) + " [" + format_numbers("%.3f", t.speedup->low) + ", " +
         format_numbers("%.3f", t.speedup->high) + "]";
}

std::string pr_text(const TargetRecord& t) {
  if (t.pr) return t.pr->outcome + (t.pr->number ? " #" + std::to_string(t.pr->number) : "");
  return t.no_pr.empty() ? "-" : t.no_pr;
}

std::string status_text(const TargetRecord& t) {
  return t.status == TargetStatus::kDone ? target_verdict_name(t.verdict) : target_status_name(t.status);
}

}  // namespace

std::string render_job_summary(const JobRecord& job) {
  std::ostringstream out;
  char line[512];
  std::snprintf(line, sizeof line, "%-3s %-28s %-7s %-10s %-28s %s\n", "#", "target", "share", "status", "speedup (95% CI)",
                "pull request");
  out << line;
  for (std::size_t i = 0; i < job.targets.size(); ++i) {
    const TargetRecord& t = job.targets[i];
    std::snprintf(line, sizeof line, "%-3zu %-28s %-7s %-10s %-28s %s\n", i + 1, t.function.substr(0, 28).c_str(),
                  t.share ? format_percent(*t.share).c_str() : "-", status_text(t).c_str(), speedup_text(t).c_str(),
                  pr_text(t).c_str());
    out << line;
  }
  out << "job " << job_status_name(job.status);
  if (!job.error.empty()) out << ": " << job.error;
  out << " (" << job.spent.evaluations << " of " << job.budget.evaluations << " evaluations, "
      << format_numbers("%.0f", job.spent.wall_s) << " s)\n";
  return out.str();
}

namespace {

// One row per target: its status, confirmed speedup, original time and PR.
void write_targets(std::ostream& html, const JobRecord& job) {
  html << "<h2>Targets</h2>\n<table><tr><th>#</th><th>function</th><th>file</th><th>share</th><th>status</th>"
          "<th>confirmed speedup (95% CI)</th><th>original</th><th>pull request</th><th>evaluations</th></tr>\n";
  for (std::size_t i = 0; i < job.targets.size(); ++i) {
    const TargetRecord& t = job.targets[i];
    html << "<tr><td>" << i + 1 << "</td><td><a href=\"targets/" << html_escape(t.slug) << "/report.html\">"
         << html_escape(t.function) << "</a></td><td>" << html_escape(t.file) << ":" << t.line << "</td><td>"
         << (t.share ? format_percent(*t.share) : "-") << "</td><td"
         << (t.verdict == TargetVerdict::kWinner ? " class=\"winner\""
             : t.status == TargetStatus::kFailed ? " class=\"failed\""
                                                 : "")
         << ">" << html_escape(status_text(t))
         << (t.reason.empty() ? "" : "<br><small>" + html_escape(t.reason) + "</small>") << "</td><td>"
         << html_escape(speedup_text(t)) << "</td><td>"
         << (t.original_s > 0 ? format_numbers("%.4f s", t.original_s) : "-") << "</td><td>";
    if (t.pr && !t.pr->url.empty())
      html << "<a href=\"" << html_escape(t.pr->url) << "\">" << html_escape(pr_text(t)) << "</a>";
    else
      html << html_escape(pr_text(t));
    html << "</td><td>" << t.spent.evaluations << " of " << t.allowance.evaluations << "</td></tr>\n";
  }
  html << "</table>\n";
}

// Each target's best speedup against evaluations, where its search drew one.
void write_progress_plots(std::ostream& html, const JobRecord& job, const fs::path& out_dir) {
  for (const TargetRecord& t : job.targets) {
    const fs::path svg = out_dir / "targets" / t.slug / "progress.svg";
    if (!fs::exists(svg)) continue;
    html << "<h3>" << html_escape(t.function) << ": best speedup against evaluations</h3>\n";
    try {
      html << read_text(svg);
    } catch (const std::exception&) {
    }
  }
}

// The profile's top entries, where the job profiled.
void write_profile(std::ostream& html, const JobRecord& job) {
  if (job.profile.empty()) return;
  html << "<h2>Profile</h2>\n<table><tr><th>share</th><th>function</th><th>file</th><th>samples</th><th></th></tr>\n";
  for (const auto& e : job.profile) {
    // Kernels' shares are of GPU time, functions' of CPU time.
    const std::string launched_by = e.value("launched_by", std::string());
    html << "<tr><td>" << format_percent(e.value("share", 0.0))
         << (e.value("kind", std::string("cpu")) == "gpu" ? " of GPU" : " of CPU") << "</td><td>"
         << html_escape(e.value("name", std::string()) +
                        (launched_by.empty() ? "" : " (launched by " + launched_by + ")"))
         << "</td><td>" << html_escape(e.value("file", std::string())) << ":" << e.value("line", 0) << "</td><td>"
         << e.value("samples", 0) << "</td><td>"
         << (e.value("external", false)    ? "external"
             : !e.value("in_scope", false) ? "out of scope"
                                           : "in scope")
         << "</td></tr>\n";
  }
  html << "</table>\n";
}

}  // namespace

std::string render_job_report(const JobRecord& job, const fs::path& out_dir) {
  std::ostringstream html;
  html << "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>maxcode run: " << html_escape(job.repository)
       << "</title>\n<style>body{font-family:sans-serif;max-width:1100px;margin:2em "
          "auto;color:#222}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px "
          "8px;text-align:left}.winner{color:#1a7f37;font-weight:bold}.failed{color:#cf222e}</style></head><body>\n";
  html << "<h1>maxcode run</h1>\n<p>" << html_escape(job.repository) << " at <code>" << html_escape(job.ref)
       << "</code> (<code>" << html_escape(job.commit.substr(0, 12)) << "</code>), started "
       << html_escape(job.started_at) << (job.finished_at.empty() ? "" : ", finished " + html_escape(job.finished_at))
       << ". Status: <b>" << html_escape(job_status_name(job.status)) << "</b>";
  if (!job.error.empty()) html << " — <span class=\"failed\">" << html_escape(job.error) << "</span>";
  html << "</p>\n<p>Budget: " << job.budget.evaluations << " evaluations, " << format_numbers("%.0f", job.budget.wall_s)
       << " s; spent " << job.spent.evaluations << " evaluations, " << format_numbers("%.0f", job.spent.wall_s)
       << " s.</p>\n";

  write_targets(html, job);
  write_progress_plots(html, job, out_dir);
  write_profile(html, job);
  html << "</body></html>\n";
  return html.str();
}

}  // namespace maxcode
