#include "bot/service/schedule/regression_report.h"

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <functional>

#include "bot/github/github_repo.h"
#include "bot/service/operations/job_page.h"
#include "runner/job/job_record.h"
#include "runner/job/sweep.h"
#include "runner/store/history.h"
#include "runner/util/format.h"

namespace maxcode::bot::service {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kLabel = "maxcode-regression";
constexpr const char* kCheckName = "maxcode regressions";

std::string short_sha(const std::string& sha) { return sha.substr(0, 7); }

}  // namespace

std::string sweep_night(const Job& job) {
  const std::time_t t = static_cast<std::time_t>(job.created_at);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M", &tm);
  return text;
}

int record_sweep(const ServiceContext& context, const Job& job, const std::vector<TargetDelivery>& deliveries) {
  const fs::path dir = job.result.dir;
  if (dir.empty() || !fs::exists(dir / "job.json")) return 0;
  JobRecord record = read_job_record(dir / "job.json");
  // The runner ran it on a checkout; the history knows the repository by its name.
  record.repository = job.repo;
  if (record.commit.empty()) record.commit = job.commit;
  HistoryStore history(context.history);
  const std::string night = sweep_night(job);
  int rows = 0;
  for (const TargetRecord& t : record.targets) {
    if (t.status == TargetStatus::kPending) continue;
    NightResult row = night_row(night, record, t, {});
    for (const TargetDelivery& d : deliveries)
      if (d.target == t.function) {
        row.pr_url = d.pr;
        row.pr_state = d.outcome;
      }
    history.record(row);
    ++rows;
  }
  return rows;
}

std::vector<Regression> regressions_of(const ServiceContext& context, const Job& job) {
  if (!fs::exists(context.history)) return {};
  HistoryStore history(context.history);
  const std::string night = sweep_night(job);
  std::vector<Regression> out;
  for (const Regression& r : find_regressions(history.all()))
    if (r.repository == job.repo && r.night == night) out.push_back(r);
  return out;
}

std::string regression_marker(const Regression& r) {
  return "<!-- maxcode-regression: " + r.file + ":" + r.target + " -->";
}

std::string regression_night_marker(const Regression& r) {
  return "<!-- maxcode-regression-night: " + r.file + ":" + r.target + " " + r.night + " -->";
}

std::string regression_title(const Regression& r) {
  return "Performance regression: `" + r.target + "` (" + r.file + ")";
}

std::string regression_text(const Regression& r) {
  std::string text = "The nightly sweep found `" + r.target + "` (" + r.file + ") slower: its own time in the profile is " +
                     fixed(r.growth, 2) + "x what it was on " + r.previous_night + " (" + regression_evidence(r) + ")";
  if (r.original_growth > 0) text += "; the benchmarks of the original took " + fixed(r.original_growth, 2) + "x as long";
  text += ".\n\n- before: " + r.previous_night + " at " + short_sha(r.previous_commit) + "\n- after: " + r.night + " at " +
          short_sha(r.commit) + "\n";
  if (!r.commits.empty()) {
    text += "\nCommits in between:\n";
    for (const std::string& c : r.commits) text += "- " + c + "\n";
  } else if (!r.previous_commit.empty() && r.previous_commit != r.commit) {
    text += "\nThe commits in between: `git log " + short_sha(r.previous_commit) + ".." + short_sha(r.commit) + "`\n";
  }
  return text;
}

namespace {

// One issue per function (found again by its marker), updated with a comment per night
// when the function regresses again.
void report_as_issues(RepoApi& repo, const std::vector<Regression>& found,
                      const std::function<void(const Regression&)>& count) {
  std::vector<Issue> open = repo.open_issues(kLabel);
  for (const Regression& r : found) {
    const std::string marker = regression_marker(r);
    const std::string body = marker + "\n" + regression_text(r) +
                             "\n_Opened by maxcode's nightly sweep; it updates this issue "
                             "when the function regresses again, rather than opening another._\n";
    const Issue* existing = nullptr;
    for (const Issue& i : open)
      if (i.body.find(marker) != std::string::npos) existing = &i;
    if (!existing) {
      repo.create_issue(regression_title(r), body, {kLabel});
      // Found again by the marker if this job's reporting is retried.
      open = repo.open_issues(kLabel);
    } else if (existing->body.find(r.night) == std::string::npos) {
      // A later night: the issue says the latest, and a comment per night keeps the story.
      // (The comment first: the body names the night, which is how a retry knows it is done.)
      repo.upsert_comment(existing->number, regression_night_marker(r),
                          regression_night_marker(r) + "\nAgain on " + r.night + ":\n\n" + regression_text(r));
      repo.update_issue(existing->number, regression_title(r), body);
    }
    count(r);
  }
}

// One failed check run on the sweep's commit, once per job (its external id).
void report_as_check_run(ServiceContext& context, RepoApi& repo, const Job& job, const std::vector<Regression>& found) {
  const std::string external_id = "regressions-" + std::to_string(job.id);
  for (const auto& [id, external] : repo.check_runs(job.commit, kCheckName))
    if (external == external_id) return;
  CheckRun run;
  run.name = kCheckName;
  run.head_sha = job.commit;
  run.external_id = external_id;
  run.status = "completed";
  run.conclusion = "failure";
  run.title = std::to_string(found.size()) + " function(s) slower than on the night before";
  for (const Regression& r : found) run.summary += regression_text(r) + "\n";
  // The sweep job's own page, by signed link: /trend needs the admin token, which the
  // repository's developers who click Details do not have (the summary lists the regressions).
  if (context.links)
    run.details_url = job_details_url(context.config.public_url, *context.links, job.id, context.queue.now());
  repo.create_check_run(run);
}

}  // namespace

int report_regressions(ServiceContext& context, std::int64_t job_id) {
  const auto job = context.queue.job(job_id);
  if (!job) return 0;
  const std::vector<Regression> found = regressions_of(context, *job);
  if (found.empty()) return 0;
  const std::string how = context.config.repository(job->repo).regressions;
  auto count = [&](const Regression& r) {
    context.metrics.count("maxcode_regressions_reported_total", "regressions found by scheduled sweeps, by how reported",
                          {{"repository", job->repo}, {"how", how}});
    context.log("regression", job->repo + " " + r.target + ": own time " + fixed(r.growth, 2) + "x since " +
                                  r.previous_night + " (reported: " + how + ")");
  };
  if (how != "none") {
    GithubClient client(context.github.client_options(), context.github.installation(job->installation_id));
    const auto slash = job->repo.find('/');
    RepoApi repo(client, job->repo.substr(0, slash), job->repo.substr(slash + 1));
    if (how == "issue") {
      report_as_issues(repo, found, count);
      return static_cast<int>(found.size());
    }
    report_as_check_run(context, repo, *job, found);
  }
  for (const Regression& r : found) count(r);
  return static_cast<int>(found.size());
}

}  // namespace maxcode::bot::service
