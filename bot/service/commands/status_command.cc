// `/maxcode status`: the repository's recent jobs, one line each, in one comment that is
// updated in place when asked again.
#include <cstdio>

#include "bot/service/commands/command_handlers.h"

namespace maxcode::bot::service {

HandledEvent run_status_command(ServiceContext& context, const CommandRequest& request) {
  const std::string marker = "<!-- maxcode-status -->";
  std::string text = marker + "\n**maxcode** jobs of " + request.repo + " (newest first):\n\n";
  const auto jobs = context.queue.jobs(request.repo, {}, 10);
  if (jobs.empty()) text += "none yet.\n";
  for (const Job& j : jobs) {
    text += "- job " + std::to_string(j.id) + ": " + (j.target.empty() ? "top targets" : "`" + j.target + "`") +
            " at " + j.commit.substr(0, 7) + " (" + j.trigger + "): **" + job_state_name(j.state) + "**";
    if (j.state == JobState::kQueued) text += ", position " + std::to_string(context.queue.queue_position(j.id));
    if (j.state == JobState::kRunning) text += " on `" + j.runner + "`";
    if (!j.pr_url.empty()) text += ", " + j.pr_url;
    text += "\n";
  }
  request.api->upsert_comment(request.issue_number, marker, text);
  return {"answered", request.repo + ": status (" + std::to_string(jobs.size()) + " jobs)"};
}

}  // namespace maxcode::bot::service
