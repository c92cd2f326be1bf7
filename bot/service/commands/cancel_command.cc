// `/maxcode cancel`: cancels the jobs asked for from this issue or pull request that
// have not finished. A queued job is cancelled at once (with Slurm, its pending batch
// job too); a running one when its runner next sends a heartbeat (it stops the job and
// reports it cancelled).
#include "bot/service/commands/command_handlers.h"
#include "bot/service/results/job_report.h"

namespace maxcode::bot::service {

HandledEvent run_cancel_command(ServiceContext& context, const CommandRequest& request) {
  int cancelled = 0;
  for (const Job& j : context.queue.jobs(request.repo, {JobState::kQueued, JobState::kRunning}, 1000)) {
    if (j.issue_number != request.issue_number) continue;
    if (!context.queue.cancel(j.id)) continue;
    ++cancelled;
    if (context.job_cancelled) context.job_cancelled(j.id);
    report_job(context, j.id);
  }
  if (cancelled == 0)
    request.api->upsert_comment(request.issue_number, "<!-- maxcode-cancel -->",
                                "<!-- maxcode-cancel -->\n**maxcode**: nothing to cancel here (no queued or running job "
                                "was asked for from this conversation).\n");
  return {"answered", request.repo + "#" + std::to_string(request.issue_number) + ": cancel: " +
                          std::to_string(cancelled) + " job(s)"};
}

}  // namespace maxcode::bot::service
