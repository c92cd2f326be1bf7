#include "bot/service/operations/job_page.h"

#include <httplib.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>

#include "bot/service/service_context.h"
#include "runner/job/job_record.h"
#include "runner/util/files.h"
#include "runner/util/format.h"
#include "runner/util/html_escape.h"
#include "runner/util/secrets.h"
#include "runner/util/slug.h"

namespace maxcode::bot::service {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The files of a target a developer may open; the others (result.json, the trajectory)
// are for programs and stay with the operator.
const std::vector<std::string> kTargetFiles = {"report.html", "patch.diff"};

// Nothing but inline styles and data: images; no script, no frame, no form, no
// request to anywhere. A report with a hostile string in it can do nothing.
constexpr const char* kPolicy =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'";

void harden(httplib::Response& res) {
  res.set_header("Content-Security-Policy", kPolicy);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("X-Frame-Options", "DENY");
  // The address holds the link's signature: a click on the PR or a report's link must
  // not hand it to the other site.
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_header("Cache-Control", "no-store");
}

std::string utc(double t) {
  if (t <= 0) return "";
  const std::time_t s = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

std::string duration(double s) {
  if (s < 0) s = 0;
  if (s < 120) return format_numbers("%.0f s", s);
  if (s < 7200) return format_numbers("%.0f min %.0f s", std::floor(s / 60), std::fmod(s, 60));
  return format_numbers("%.0f h %.0f min", std::floor(s / 3600), std::floor(std::fmod(s, 3600) / 60));
}

bool web_link(const std::string& url) { return url.rfind("https://", 0) == 0 || url.rfind("http://", 0) == 0; }

std::string link(const std::string& url, const PageScrub& scrub) {
  const std::string shown = html_escape(scrub(url));
  return web_link(url) ? "<a href='" + shown + "'>" + shown + "</a>" : shown;
}

// "1.42x (1.38x to 1.47x)" from a speedup interval or a bare number.
std::string speedup_text(const RatioInterval& s) {
  std::string text = format_numbers("%.2fx", s.median);
  if (s.low > 0) text += format_numbers(" (95%% interval %.2fx to %.2fx)", s.low, s.high);
  return text;
}

// Why a job failed, whole: `maxcode run`'s own error (job.json) when it recorded one,
// else the attempt's error, else the summary that holds it.
std::string cause_of(const Job& job) {
  if (std::string e = job.result.run_error(); !e.empty()) return e;
  if (!job.error.empty()) return job.error;
  return job.summary;
}

}  // namespace

std::string job_page_link(const LinkSigner& links, std::int64_t job_id, double now) {
  return "/jobs/" + std::to_string(job_id) + "?" + links.query(job_id, now);
}

std::string job_details_url(const std::string& public_url, const LinkSigner& links, std::int64_t job_id, double now) {
  if (public_url.empty()) return "";
  std::string base = public_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base + job_page_link(links, job_id, now);
}

void PageScrub::replace(const std::string& from, const std::string& to) {
  if (from.empty() || from == "/" || from == ".") return;  // would replace every character
  pairs_.emplace_back(from, to);
  std::stable_sort(pairs_.begin(), pairs_.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

std::string PageScrub::operator()(std::string text) const {
  for (const auto& [from, to] : pairs_)
    for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
  return redact_secrets(std::move(text));
}

namespace {

// One job's page, section by section in reading order.
class JobPage {
 public:
  JobPage(const Job& job, const std::map<std::string, std::vector<std::string>>& files, const std::string& link_query,
          const PageScrub& scrub, double now)
      : job(job), files(files), link_query(link_query), scrub(scrub), now(now), id(std::to_string(job.id)) {}

  std::string esc(const std::string& s) const { return html_escape(scrub(s)); }

  std::string head() const {
    std::string h =
        "<!doctype html><html lang=en><head><meta charset='utf-8'><meta name=viewport content='width=device-width'>"
        "<meta name=referrer content=no-referrer><title>maxcode job " +
        id + ": " + esc(job.repo) +
        "</title><style>"
        "body{font:14px system-ui,sans-serif;margin:24px auto;max-width:1100px;padding:0 16px;color:#1b1f24}"
        "h1{font-size:20px}h2{font-size:16px;margin-top:28px}table{border-collapse:collapse}"
        "td,th{border-bottom:1px solid #d8dee4;padding:4px "
        "10px;text-align:left;vertical-align:top}th{background:#f6f8fa}"
        ".muted{color:#656d76}.state{font-weight:600}.queued{color:#9a6700}.running,.delivering{color:#0969da}"
        ".done{color:#1a7f37}.failed{color:#cf222e}.cancelled{color:#656d76}"
        "pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;padding:10px;border-radius:6px}"
        ".cause{background:#ffebe9;border:1px solid #ff8182}</style></head><body>";
    h += "<h1>maxcode job " + id + " <span class='state " + job_state_name(job.state) + "'>" +
         job_state_name(job.state) + "</span></h1>";

    return h;
  }

  // Repository, commit, target, trigger, times and pull requests.
  std::string facts() const {
    std::string h;
    const std::string wanted = job.target.empty() ? "the hottest functions (profiled)" : job.target;
    h += "<table><tr><th>repository</th><td>" + esc(job.repo) + "</td></tr><tr><th>commit</th><td><code>" +
         esc(job.commit) + "</code></td></tr><tr><th>target</th><td>" + esc(wanted) +
         "</td></tr><tr><th>trigger</th><td>" + esc(job.trigger) +
         (job.requested_by.empty() ? "" : " by " + esc(job.requested_by)) + "</td></tr>";
    if (!job.policy.empty()) h += "<tr><th>policy</th><td>" + esc(job.policy) + "</td></tr>";
    h += "<tr><th>attempts</th><td>" + std::to_string(job.attempts) + " of " + std::to_string(job.max_attempts) +
         "</td></tr>";
    h += "<tr><th>queued</th><td>" + utc(job.created_at) + "</td></tr>";
    if (job.started_at > 0)
      h += "<tr><th>started</th><td>" + utc(job.started_at) + " <span class=muted>(waited " +
           duration(job.started_at - job.created_at) + ")</span></td></tr>";
    if (job.finished_at > 0) {
      h += "<tr><th>finished</th><td>" + utc(job.finished_at) + "</td></tr><tr><th>duration</th><td>";
      if (job.started_at > 0) h += duration(job.finished_at - job.started_at) + " running, ";
      h += duration(job.finished_at - job.created_at) + " in all</td></tr>";
    } else if (job.started_at > 0) {
      h += "<tr><th>duration</th><td>running for " + duration(now - job.started_at) + "</td></tr>";
    }

    // Pull requests: the job's, and each delivered target's.
    std::vector<std::string> prs;
    if (!job.pr_url.empty()) prs.push_back(job.pr_url);
    for (const TargetDelivery& d : job.result.deliveries)
      if (!d.pr.empty() && std::find(prs.begin(), prs.end(), d.pr) == prs.end()) prs.push_back(d.pr);
    h += "<tr><th>pull request</th><td>";
    if (prs.empty()) h += "<span class=muted>none</span>";
    for (std::size_t i = 0; i < prs.size(); ++i) h += (i ? "<br>" : "") + link(prs[i], scrub);
    h += "</td></tr></table>";

    return h;
  }

  // Why it failed (the cause whole), or the summary.
  std::string outcome() const {
    std::string h;
    if (job.state == JobState::kFailed || (job.state != JobState::kDone && !job.error.empty())) {
      h += "<h2>" + std::string(job.state == JobState::kFailed ? "Why it failed" : "The last attempt's error") +
           "</h2><pre class=cause>" + esc(job.state == JobState::kFailed ? cause_of(job) : job.error) + "</pre>";
    } else if (!job.summary.empty()) {
      h += "<h2>Summary</h2><pre>" + esc(job.summary) + "</pre>";
    }
    if (!job.result.unreadable.empty())
      h += "<h2>The stored result</h2><pre class=cause>" + esc(job.result.unreadable) + "</pre>";
    return h;
  }

  std::string targets() const {
    std::string h;
    // Targets: job.json's record of each (speedup, verdict), the files the runner sent.
    // A record of another shape (a runner of another version) shows as its files only.
    std::map<std::string, TargetRecord> recorded;
    for (TargetRecord& target : job.result.target_records())
      if (!target.slug.empty()) recorded[target.slug] = std::move(target);
    const std::map<std::string, double>& speedups = job.result.speedups;
    std::set<std::string> slugs;
    for (const auto& [slug, _] : files) slugs.insert(slug);
    for (const auto& [slug, _] : recorded) slugs.insert(slug);
    if (!slugs.empty()) {
      h += "<h2>Targets</h2><table><tr><th>function</th><th>status</th><th>speedup</th><th>original "
           "time</th><th>files</th></tr>";
      for (const std::string& slug : slugs) {
        const auto found = recorded.find(slug);
        const bool known = found != recorded.end();
        const TargetRecord t = known ? found->second : TargetRecord{};
        const std::string function = t.function.empty() ? slug : t.function;
        std::string status = known ? target_status_name(t.status) : "";  // nothing recorded: no status to show
        for (const std::string& more : {target_verdict_name(t.verdict), t.reason, t.no_pr})
          if (!more.empty() && more != status) status += (status.empty() ? "" : ": ") + more;
        std::string speedup = t.speedup ? speedup_text(*t.speedup) : "";
        if (auto found_speedup = speedups.find(function); speedup.empty() && found_speedup != speedups.end())
          speedup = format_numbers("%.2fx", found_speedup->second);
        const std::string original = t.original_s > 0 ? format_numbers("%.4g s", t.original_s) : "";
        std::string links;
        if (auto it = files.find(slug); it != files.end())
          for (const std::string& name : it->second)
            links += "<a href='/jobs/" + id + "/targets/" + html_escape(slug) + "/" + name + "?" +
                     html_escape(link_query) + "'>" + name + "</a> ";
        h += "<tr><td><code>" + esc(function) + "</code>" +
             (t.file.empty() ? "" : " <span class=muted>" + esc(t.file) + "</span>") + "</td><td>" + esc(status) +
             "</td><td>" + (speedup.empty() ? "<span class=muted>-</span>" : esc(speedup)) + "</td><td>" +
             esc(original) + "</td><td>" + (links.empty() ? "<span class=muted>none</span>" : links) + "</td></tr>";
      }
      h += "</table>";
    }

    return h;
  }

  std::string log() const {
    std::string h;
    const std::string& log = job.result.log;
    if (!log.empty()) {
      const std::size_t keep = 8000;  // the end, where the cause is; the runner keeps the whole
      h += std::string("<h2>The job's log</h2><details") + (job.state == JobState::kFailed ? " open" : "") +
           "><summary>" + (log.size() > keep ? "its last " + std::to_string(keep) + " characters" : "all of it") +
           "</summary><pre>" + esc(log.substr(log.size() > keep ? log.size() - keep : 0)) + "</pre></details>";
    }
    return h;
  }

 private:
  const Job& job;
  const std::map<std::string, std::vector<std::string>>& files;
  const std::string& link_query;
  const PageScrub& scrub;
  const double now;
  const std::string id;
};

}  // namespace

std::string render_job_page(const Job& job, const std::map<std::string, std::vector<std::string>>& files,
                            const std::string& link_query, double expires, const PageScrub& scrub, double now) {
  const JobPage page(job, files, link_query, scrub, now);
  return page.head() + page.facts() + page.outcome() + page.targets() + page.log() +
         "<p class=muted>This page's link is valid until " + utc(expires) +
         ". Anyone who has it can read this job's page and reports until then, and nothing else.</p></body></html>\n";
}

namespace {

// The pages behind a job's signed link: the job page and the files meant for people.
// Held by the server's handlers for as long as it serves.
class JobPageRoutes {
 public:
  JobPageRoutes(ServiceContext& context, const LinkSigner& links, const std::vector<std::string>& secrets)
      : context_(context), links_(links) {
    for (const std::string& s : secrets)
      if (s.size() >= kShortestSecret) scrub_.replace(s, "[redacted]");
    std::error_code ignored;
    // As configured (perhaps relative), absolute, and with links resolved.
    for (const fs::path& dir :
         {context.data_dir, fs::absolute(context.data_dir, ignored), fs::weakly_canonical(context.data_dir, ignored)})
      // A short relative name ("data") would be replaced inside ordinary words.
      if (dir.is_absolute() || dir.string().size() >= 12) scrub_.replace(dir.lexically_normal().string(), "DATA_DIR");
  }

  void page(const httplib::Request& req, httplib::Response& res) const {
    const auto job = open(req, res);
    if (!job) return;
    const std::string query = "exp=" + req.get_param_value("exp") + "&sig=" + req.get_param_value("sig");
    double expires = 0;
    try {
      expires = std::stod(req.get_param_value("exp"));
    } catch (const std::exception&) {
    }
    res.set_content(render_job_page(*job, target_files(*job), query, expires, scrub_, context_.queue.now()),
                    "text/html; charset=utf-8");
  }

  void file(const httplib::Request& req, httplib::Response& res) const {
    const auto job = open(req, res);
    if (!job) return;
    const std::string slug = req.matches[2], name = req.matches[3];
    const auto dir = results_dir(*job);
    const fs::path file = dir ? *dir / "targets" / slug / name : fs::path();
    if (!dir || !safe_result_name(slug) || !fs::is_regular_file(file)) {
      res.status = 404;
      res.set_content("No such file for this job.\n", "text/plain; charset=utf-8");
      return;
    }
    res.set_content(scrub_(read_text(file)),
                    name == "report.html" ? "text/html; charset=utf-8" : "text/plain; charset=utf-8");
  }

 private:
  // The job, when the link is good for it; otherwise the answer has been given.
  std::optional<Job> open(const httplib::Request& req, httplib::Response& res) const {
    harden(res);
    std::int64_t id = 0;
    try {
      id = std::stoll(req.matches[1]);
    } catch (const std::exception&) {
    }
    const LinkCheck check =
        links_.verify(id, req.get_param_value("exp"), req.get_param_value("sig"), context_.queue.now());
    if (check != LinkCheck::kValid) {
      res.status = 403;
      res.set_content(check == LinkCheck::kExpired
                          ? "This link to maxcode job " + std::to_string(id) + " has expired (links last " +
                                format_numbers("%.4g", links_.ttl_s() / 86400) +
                                " days). The service's operator can give you a new one.\n"
                          : "This link is not valid: it was not made by this maxcode service for this job, or it was "
                            "changed. Open the job from its check run's Details on GitHub.\n",
                      "text/plain; charset=utf-8");
      return std::nullopt;
    }
    auto job = context_.queue.job(id);
    if (!job) {
      res.status = 404;
      res.set_content("No job " + std::to_string(id) + " here.\n", "text/plain; charset=utf-8");
    }
    return job;
  }

  // The folder of the job's stored results: its attempt's folder under this data dir's
  // jobs/ID, whatever absolute path it was stored under (a data dir restored elsewhere
  // still serves), and never a folder outside it.
  std::optional<fs::path> results_dir(const Job& job) const {
    const std::string attempt = fs::path(job.result.dir).filename().string();
    if (attempt.rfind("attempt-", 0) != 0 || !safe_result_name(attempt)) return std::nullopt;
    return context_.data_dir / "jobs" / std::to_string(job.id) / attempt;
  }

  // Per target, the files a developer may open that the runner sent.
  std::map<std::string, std::vector<std::string>> target_files(const Job& job) const {
    std::map<std::string, std::vector<std::string>> files;
    const auto dir = results_dir(job);
    if (!dir) return files;
    for (const std::string& slug : job.result.targets) {
      if (!safe_result_name(slug)) continue;
      auto& present = files[slug];
      for (const std::string& name : kTargetFiles)
        if (fs::is_regular_file(*dir / "targets" / slug / name)) present.push_back(name);
    }
    return files;
  }

  ServiceContext& context_;
  const LinkSigner& links_;
  PageScrub scrub_;
};

}  // namespace

void add_job_page_routes(httplib::Server& server, ServiceContext& context, const LinkSigner& links,
                         const std::vector<std::string>& secrets) {
  auto routes = std::make_shared<const JobPageRoutes>(context, links, secrets);
  server.Get(R"(/jobs/(\d+))",
             [routes](const httplib::Request& req, httplib::Response& res) { routes->page(req, res); });
  server.Get(R"(/jobs/(\d+)/targets/([^/]+)/(report\.html|patch\.diff))",
             [routes](const httplib::Request& req, httplib::Response& res) { routes->file(req, res); });
}

}  // namespace maxcode::bot::service
