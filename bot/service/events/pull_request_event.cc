// `pull_request`: a maxcode PR closed without merging means "ignored": the target is
// not proposed again until its code changes (delivery checks the function's hash,
// bot/delivery/deliver.h). The service records it so the dashboard shows it. Other
// actions, and PRs from forks, start nothing: fork code never runs.
#include "bot/service/events/event_handlers.h"

namespace maxcode::bot::service {

HandledEvent handle_pull_request(ServiceContext& context, const nlohmann::json& payload) {
  const std::string repo = payload_string(payload, {"repository", "full_name"});
  const std::string action = payload_string(payload, {"action"});
  const std::string number = payload_string(payload, {"pull_request", "number"});
  if (action != "closed") return {"ignored", repo + "#" + number + ": pull_request " + action};
  const std::string branch = payload_string(payload, {"pull_request", "head", "ref"});
  const bool merged = payload["pull_request"].value("merged", false);
  if (branch.rfind("maxcode/", 0) != 0) return {"ignored", repo + "#" + number + ": not a maxcode branch"};
  if (merged) return {"recorded", repo + "#" + number + ": merged"};
  context.queue.ignored.add(repo, branch, payload_string(payload, {"pull_request", "head", "sha"}));
  context.metrics.count("maxcode_ignored_targets_total", "maxcode PRs closed without merging");
  return {"recorded", repo + "#" + number + ": closed unmerged; " + branch + " is ignored until its code changes"};
}

}  // namespace maxcode::bot::service
