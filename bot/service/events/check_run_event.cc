// `check_run` and `check_suite` with action `rerequested`: someone pressed "Re-run" (one
// check) or "Re-run all checks" (the suite) in the Checks tab. The job behind the check
// run (its external_id, or the check run id the queue keeps) runs again, with a new check
// run as GitHub expects; for a suite, every finished job of this App on that commit.
// A job still queued or running is left as it is. Other actions (created, completed,
// requested_action, the suite's requested) are GitHub telling us of our own work.
#include "bot/service/events/event_handlers.h"
#include "bot/service/results/job_report.h"

namespace maxcode::bot::service {

namespace {

bool ours(const ServiceContext& context, const nlohmann::json& owner) {
  // Without an app_id configured (tests, a repository webhook), every check is taken as ours.
  if (context.config.app_id.empty() || !owner.contains("app") || !owner["app"].is_object()) return true;
  const auto& id = owner["app"]["id"];
  return !id.is_number_integer() || std::to_string(id.get<long long>()) == context.config.app_id;
}

std::string sender(const nlohmann::json& payload) {
  const auto it = payload.find("sender");
  if (it == payload.end() || !it->is_object() || !it->contains("login") || !(*it)["login"].is_string()) return "";
  return (*it)["login"].get<std::string>();
}

std::string run_again(ServiceContext& context, const Job& job, const std::string& user) {
  if (!context.queue.rerun(job.id, user))
    return "job " + std::to_string(job.id) + " is " + job_state_name(job.state) + " already";
  context.jobs_changed();
  report_job(context, job.id);
  return "job " + std::to_string(job.id) + " queued again";
}

}  // namespace

HandledEvent handle_check_run(ServiceContext& context, const nlohmann::json& payload) {
  const std::string action = payload_string(payload, {"action"});
  const std::string repo = payload_string(payload, {"repository", "full_name"});
  if (action != "rerequested") return {"ignored", repo + ": check_run " + action};
  const std::string sha = payload_string(payload, {"check_run", "head_sha"});
  const nlohmann::json& run = payload.at("check_run");
  if (!ours(context, run)) return {"ignored", repo + ": another App's check run"};
  std::optional<Job> job;
  // external_id is the job's id (job_report.cc); the check run's own id is the fallback.
  if (run.contains("external_id") && run["external_id"].is_string()) {
    try {
      job = context.queue.job(std::stoll(run["external_id"].get<std::string>()));
    } catch (const std::exception&) {
    }
  }
  if (!job) job = context.queue.job_by_check_run(std::stoll(payload_string(payload, {"check_run", "id"})));
  if (!job || job->repo != repo || job->commit != sha)
    return {"ignored", repo + ": no job of this App has that check run (" + sha.substr(0, 7) + ")"};
  const std::string user = sender(payload);
  return {"job", repo + ": Re-run: " + run_again(context, *job, user)};
}

HandledEvent handle_check_suite(ServiceContext& context, const nlohmann::json& payload) {
  const std::string action = payload_string(payload, {"action"});
  const std::string repo = payload_string(payload, {"repository", "full_name"});
  if (action != "rerequested") return {"ignored", repo + ": check_suite " + action};
  const std::string sha = payload_string(payload, {"check_suite", "head_sha"});
  if (!ours(context, payload.at("check_suite"))) return {"ignored", repo + ": another App's check suite"};
  const std::string user = sender(payload);
  std::string note;
  for (const Job& job : context.queue.jobs(repo, {JobState::kDone, JobState::kFailed, JobState::kCancelled}, 1000))
    if (job.commit == sha) note += (note.empty() ? "" : "; ") + run_again(context, job, user);
  if (note.empty()) return {"ignored", repo + ": no finished job of this App on " + sha.substr(0, 7)};
  return {"job", repo + ": Re-run all: " + note};
}

}  // namespace maxcode::bot::service
