#include "bot/service/schedule/scheduler.h"

#include "bot/github/github_repo.h"
#include "bot/service/events/event_handlers.h"
#include "bot/service/results/job_report.h"

namespace maxcode::bot::service {

Scheduler::Scheduler(ServiceContext& context) : context_(context) {
  for (std::size_t i = 0; i < context.config.schedules.size(); ++i) {
    const ScheduleConfig& s = context.config.schedules[i];
    try {
      entries_.push_back({s, CronExpression::parse(s.cron), TimeZone::load(s.time_zone)});
    } catch (const std::exception& e) {
      throw ServiceConfigError("schedules[" + std::to_string(i) + "]: " + e.what());
    }
  }
}

int Scheduler::sweep(const Entry& e) {
  std::vector<std::pair<std::string, std::string>> targets;  // repository, installation
  if (!e.config.repository.empty()) {
    const auto installation = context_.queue.installations.for_repo(e.config.repository);
    if (!installation) throw std::runtime_error(e.config.repository + " is in no active App installation");
    targets.push_back({e.config.repository, *installation});
  } else {
    for (const auto& repo : context_.queue.installations.repos(e.config.installation))
      targets.push_back({repo, e.config.installation});
  }
  int queued = 0;
  for (const auto& [repo, installation] : targets) {
    GithubClient client(context_.github.client_options(), context_.github.installation(installation));
    const auto slash = repo.find('/');
    RepoApi api(client, repo.substr(0, slash), repo.substr(slash + 1));
    const auto head = api.branch(api.default_branch());
    if (!head) continue;
    const auto enqueued = context_.queue.enqueue(job_spec_for(context_.config, repo, installation, head->sha, "schedule"));
    if (!enqueued.created) continue;
    ++queued;
    if (context_.report) context_.report(enqueued.job.id);
  }
  return queued;
}

int Scheduler::tick() {
  int queued = 0;
  const double now = context_.queue.now();
  for (const Entry& e : entries_) {
    const auto last = context_.queue.schedule.last_run(e.config.name);
    if (!last) {  // new schedule: its first time is the next one, no catch-up for the past
      context_.queue.schedule.set_run(e.config.name, now);
      continue;
    }
    const std::int64_t next = e.cron.next_after(static_cast<std::int64_t>(*last), e.zone);
    if (next < 0 || next > now) continue;
    // Replicas: the one that takes the run sweeps; a crash mid-sweep leaves it to
    // another after queue.work_lease_s.
    if (!context_.queue.schedule.take_run(e.config.name, *last)) continue;
    try {
      const int n = sweep(e);
      // Marked after queueing: a crash in between queues again, which the idempotency
      // key turns into nothing.
      context_.queue.schedule.set_run(e.config.name, now);
      context_.metrics.count("maxcode_schedule_runs_total", "scheduled sweeps started", {{"schedule", e.config.name}});
      context_.log("schedule", e.config.name + ": due at " + std::to_string(next) + ", " + std::to_string(n) + " job(s) queued");
      queued += n;
    } catch (const std::exception& ex) {
      context_.metrics.count("maxcode_schedule_errors_total", "scheduled sweeps that could not start", {{"schedule", e.config.name}});
      context_.log("schedule", e.config.name + ": " + ex.what() + "; will try again");
    }
  }
  if (queued && context_.jobs_changed) context_.jobs_changed();
  return queued;
}

}  // namespace maxcode::bot::service
