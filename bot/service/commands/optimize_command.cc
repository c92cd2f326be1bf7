// `/maxcode optimize [function] [--policy P]`: a job for the head of the default branch
// (also when asked on a pull request: a PR's code, a fork's above all, never runs). The
// reply comment follows the job (job_report.h). Asking again for the same commit and
// function finds the existing job; a failed or cancelled one is queued again.
#include "bot/service/commands/command_handlers.h"
#include "bot/service/results/job_report.h"

namespace maxcode::bot::service {

HandledEvent run_optimize_command(ServiceContext& context, const CommandRequest& request, const CommentCommand& command) {
  const std::string where = request.repo + "#" + std::to_string(request.issue_number);
  const std::string branch = request.api->default_branch();
  const auto head = request.api->branch(branch);
  if (!head) throw GithubError(request.repo + ": the default branch " + branch + " was not found", 404);
  JobSpec spec = job_spec_for(context.config, request.repo, request.installation_id, head->sha, "comment");
  spec.target = command.function;
  if (!command.policy.empty()) spec.policy = command.policy;
  spec.issue_number = request.issue_number;
  spec.requested_by = request.user;
  const auto e = context.queue.enqueue(spec, /*reopen=*/true);
  if (e.created || e.reopened) {
    context.jobs_changed();
    report_job(context, e.job.id);
    return {"job", where + ": job " + std::to_string(e.job.id) + (e.reopened ? " queued again" : " queued") +
                       " for " + (spec.target.empty() ? "the top targets" : spec.target) + " at " + head->sha.substr(0, 7)};
  }
  // The job exists: show it here too (its comment may live on another issue).
  request.api->upsert_comment(request.issue_number, job_marker(e.job.id),
                              job_comment(e.job, context.queue.queue_position(e.job.id)));
  return {"duplicate", where + ": job " + std::to_string(e.job.id) + " exists (" + job_state_name(e.job.state) + ")"};
}

}  // namespace maxcode::bot::service
