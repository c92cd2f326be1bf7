// Reading webhook payloads, and the job a trigger makes (event_handlers.h).
#include "bot/service/events/event_handlers.h"

namespace maxcode::bot::service {

std::string payload_string(const nlohmann::json& payload, std::initializer_list<const char*> path) {
  const nlohmann::json* at = &payload;
  std::string where;
  for (const char* key : path) {
    where += (where.empty() ? "" : ".") + std::string(key);
    if (!at->is_object() || !at->contains(key) || (*at)[key].is_null()) throw PayloadError("the payload has no " + where);
    at = &(*at)[key];
  }
  if (at->is_string()) return at->get<std::string>();
  if (at->is_number_integer()) return std::to_string(at->get<long long>());
  throw PayloadError("the payload's " + where + " is not a string");
}

std::string installation_of(const nlohmann::json& payload) {
  if (!payload.contains("installation") || !payload["installation"].is_object()) return "";
  const auto& id = payload["installation"]["id"];
  return id.is_number_integer() ? std::to_string(id.get<long long>()) : "";
}

JobSpec job_spec_for(const ServiceConfig& config, const std::string& repo, const std::string& installation_id,
                     const std::string& commit, const std::string& trigger) {
  const RepositoryConfig& rc = config.repository(repo);
  JobSpec s;
  s.repo = repo;
  s.installation_id = installation_id;
  s.commit = commit;
  s.trigger = trigger;
  s.policy = rc.policy.empty() ? config.policy : rc.policy;
  s.labels = rc.labels.empty() ? config.labels : rc.labels;
  return s;
}

}  // namespace maxcode::bot::service
