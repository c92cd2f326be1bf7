// `installation` and `installation_repositories`: which accounts and repositories the
// App may act on. A deleted or suspended installation cancels its queued jobs; a
// repository removed from one cancels that repository's.
#include "bot/service/events/event_handlers.h"

namespace maxcode::bot::service {

namespace {

nlohmann::json names(const nlohmann::json& payload, const char* key) {
  nlohmann::json out = nlohmann::json::array();
  if (payload.contains(key) && payload[key].is_array())
    for (const auto& r : payload[key])
      if (r.is_object() && r.contains("full_name") && r["full_name"].is_string()) out.push_back(r["full_name"]);
  return out;
}

}  // namespace

HandledEvent handle_installation(ServiceContext& context, const nlohmann::json& payload) {
  const std::string action = payload_string(payload, {"action"});
  const std::string id = payload_string(payload, {"installation", "id"});
  const std::string account = payload_string(payload, {"installation", "account", "login"});
  std::string state = "active";
  if (action == "deleted") state = "deleted";
  else if (action == "suspend") state = "suspended";
  const bool has_repos = payload.contains("repositories") && payload["repositories"].is_array();
  context.queue.installations.set(id, account, state, has_repos ? names(payload, "repositories") : nlohmann::json());
  return {"recorded", "installation " + id + " (" + account + "): " + action + " -> " + state};
}

HandledEvent handle_installation_repositories(ServiceContext& context, const nlohmann::json& payload) {
  const std::string id = payload_string(payload, {"installation", "id"});
  const auto added = names(payload, "repositories_added"), removed = names(payload, "repositories_removed");
  context.queue.installations.add_repos(id, added, removed);
  return {"recorded", "installation " + id + ": " + std::to_string(added.size()) + " repositories added, " +
                          std::to_string(removed.size()) + " removed"};
}

}  // namespace maxcode::bot::service
