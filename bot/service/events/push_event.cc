// `push`: a push to the default branch starts a job (the profiler picks the targets)
// when the repository's settings enable it. Pushes to other branches, tags and
// deletions start nothing: only code already on the default branch ever runs.
#include "bot/service/events/event_handlers.h"
#include "bot/service/results/job_report.h"

namespace maxcode::bot::service {

HandledEvent handle_push(ServiceContext& context, const nlohmann::json& payload) {
  const std::string repo = payload_string(payload, {"repository", "full_name"});
  const std::string ref = payload_string(payload, {"ref"});
  const std::string default_branch = payload_string(payload, {"repository", "default_branch"});
  if (ref != "refs/heads/" + default_branch) return {"ignored", repo + ": push to " + ref + ", not the default branch"};
  if (payload.value("deleted", false)) return {"ignored", repo + ": branch deleted"};
  if (!context.config.repository(repo).push) return {"ignored", repo + ": push jobs are not enabled for it"};
  const std::string installation = installation_of(payload);
  if (installation.empty()) return {"ignored", repo + ": the payload names no App installation"};
  const std::string after = payload_string(payload, {"after"});
  const auto e = context.queue.enqueue(job_spec_for(context.config, repo, installation, after, "push"));
  if (!e.created) return {"duplicate", repo + ": job " + std::to_string(e.job.id) + " exists for " + after.substr(0, 7)};
  context.jobs_changed();
  report_job(context, e.job.id);
  return {"job", repo + ": job " + std::to_string(e.job.id) + " queued for push " + after.substr(0, 7)};
}

}  // namespace maxcode::bot::service
