#include "bot/service/results/job_report.h"

#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

#include "bot/github/github_repo.h"
#include "bot/service/app/github_retry.h"
#include "bot/service/operations/job_page.h"

namespace maxcode::bot::service {

namespace {

std::string what(const Job& job) {
  return job.target.empty() ? "the hottest functions" : "`" + job.target + "`";
}

std::pair<std::string, std::string> split_repo(const std::string& full) {
  const auto slash = full.find('/');
  return {full.substr(0, slash), full.substr(slash + 1)};
}

}  // namespace

std::string check_run_name(const Job& job) {
  std::string name = "maxcode: optimize " + (job.target.empty() ? std::string("top targets") : job.target);
  if (job.trigger != "comment") name += " (" + job.trigger + ")";
  return name;
}

namespace {

CheckRun check_run_for(const ServiceContext& context, const Job& job) {
  CheckRun run;
  // One name per job on a commit (the job key is repository, commit, target, trigger),
  // so that two jobs on one commit are told apart in the Checks tab.
  run.name = check_run_name(job);
  run.head_sha = job.commit;
  run.external_id = std::to_string(job.id);
  // Details opens the job's own page through a signed link (job_page.h): the people
  // who see the check run have no admin token. Each report signs it afresh, so the
  // link GitHub keeps lives details_link_ttl_s from the job's last report.
  if (context.links) run.details_url = job_details_url(context.config.public_url, *context.links, job.id, context.queue.now());
  if (job.state == JobState::kQueued) {
    run.status = "queued";
    run.title = "Queued: optimize " + what(job);
    run.summary = "Waiting for a runner.";
  } else if (job.state == JobState::kRunning || job.state == JobState::kDelivering) {
    run.status = "in_progress";
    run.title = "Optimizing " + what(job);
    run.summary = job.state == JobState::kRunning ? "Runner `" + job.runner + "` is searching and measuring."
                                                  : "Measured; opening the pull request.";
  } else {
    run.status = "completed";
    // A job a comment asked for answers in its reply comment; when it fails (a typo in
    // the function's name, say), its check is neutral: a person's command never turns
    // the default branch red.
    run.conclusion = job.state == JobState::kDone        ? (job.pr_url.empty() ? "neutral" : "success")
                     : job.state == JobState::kCancelled ? "cancelled"
                     : job.trigger == "comment"          ? "neutral"
                                                         : "failure";
    run.title = job.state == JobState::kDone ? (job.pr_url.empty() ? "No faster version found" : "Faster version found")
                : job.state == JobState::kCancelled ? "Cancelled"
                                                    : "The job failed";
    run.summary = job.summary.empty() ? job.error : job.summary;
  }
  if (run.summary.empty()) run.summary = run.title;
  return run;
}

}  // namespace

std::string job_marker(std::int64_t job_id) { return "<!-- maxcode-job: " + std::to_string(job_id) + " -->"; }

std::string job_comment(const Job& job, int queue_position) {
  std::string text = job_marker(job.id) + "\n";
  const std::string head = "**maxcode** job " + std::to_string(job.id) + " (optimize " + what(job) + " at " +
                           job.commit.substr(0, 7) + (job.policy.empty() ? "" : ", policy " + job.policy) + "): ";
  if (job.state == JobState::kQueued) {
    text += head + "accepted, queued";
    if (queue_position > 0) text += " at position " + std::to_string(queue_position);
    text += job.attempts > 0 ? " (attempt " + std::to_string(job.attempts + 1) + ", after: " + job.error + ")." : ".";
  } else if (job.state == JobState::kRunning) {
    text += head + "running on runner `" + job.runner + "`.";
  } else if (job.state == JobState::kDelivering) {
    text += head + "measured; opening the pull request.";
  } else if (job.state == JobState::kDone) {
    text += head + (job.pr_url.empty() ? "no pull request.\n\n" : "done: " + job.pr_url + "\n\n") + job.summary;
  } else if (job.state == JobState::kCancelled) {
    text += head + "cancelled. " + job.summary;
  } else {
    text += head + "failed.\n\n" + (job.summary.empty() ? job.error : job.summary);
  }
  return text + "\n";
}

void report_job(ServiceContext& context, std::int64_t job_id) {
  // The event worker (a job just queued), the reporter thread (a runner claimed it) and
  // a cancel may report one job at once: both saw check_run_id 0 and each created a
  // check run, one of which stayed queued forever. Reports are made one at a time, and
  // each reads the job (its check run id) under the lock, so the run is created once.
  static std::mutex one_at_a_time;
  std::lock_guard lock(one_at_a_time);
  // Replicas sharing the store: the same, between processes (job_queue.h take_report).
  // Waits for the other's report (GitHub calls, well under a second), or for its lease
  // to run out if that replica died; reports the job as it is then.
  while (!context.queue.leases.take_report(job_id)) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  struct EndReport {
    JobQueue& queue;
    std::int64_t id;
    ~EndReport() {
      try {
        queue.leases.end_report(id);
      } catch (...) {
      }
    }
  } end_report{context.queue, job_id};
  const auto job = context.queue.job(job_id);
  if (!job) return;
  const std::string key = std::to_string(job_id);
  // GitHub asked for time: the deferred report brings GitHub up to date when it may.
  if (context.deferred && context.deferred->waiting("report", key)) return;
  try {
    GithubClient client(context.github.client_options(), context.github.installation(job->installation_id));
    const auto [owner, name] = split_repo(job->repo);
    RepoApi repo(client, owner, name);
    if (job->issue_number > 0)
      repo.upsert_comment(static_cast<int>(job->issue_number), job_marker(job->id),
                          job_comment(*job, context.queue.queue_position(job->id)));
    const CheckRun run = check_run_for(context, *job);
    if (job->check_run_id == 0) {
      context.queue.set_check_run(job->id, repo.create_check_run(run));
    } else {
      repo.update_check_run(job->check_run_id, run);
    }
    context.metrics.count("maxcode_job_reports_total", "comment and check-run updates", {{"result", "ok"}});
    if (context.deferred) context.deferred->remove("report", key);
  } catch (const std::exception& e) {
    if (defer_after_failure(context, "report", key, e)) {
      context.metrics.count("maxcode_job_reports_total", "comment and check-run updates", {{"result", "deferred"}});
      return;
    }
    context.metrics.count("maxcode_job_reports_total", "comment and check-run updates", {{"result", "error"}});
    context.log("report", "job " + key + " (" + job->repo + "): could not update GitHub: " + e.what());
  }
}

}  // namespace maxcode::bot::service
