// One handler per GitHub event the App subscribes to (and one per comment command,
// command_handlers.h). Each takes the parsed payload and returns one line saying what it
// did (kept with the delivery, logged, counted by outcome). A handler throws only for a
// payload that lacks what its event must have; the router records that as rejected.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "bot/service/service_context.h"
#include "runner/util/error.h"

namespace maxcode::bot::service {

struct HandledEvent {
  std::string outcome;  // metric label: job | duplicate | ignored | answered | recorded | refused
  std::string note;     // for the log and the delivery record
};

// A payload without a field its event must have.
class PayloadError : public Error {
 public:
  using Error::Error;
};

HandledEvent handle_push(ServiceContext& context, const nlohmann::json& payload);
HandledEvent handle_issue_comment(ServiceContext& context, const nlohmann::json& payload);
HandledEvent handle_pull_request(ServiceContext& context, const nlohmann::json& payload);
HandledEvent handle_installation(ServiceContext& context, const nlohmann::json& payload);
HandledEvent handle_installation_repositories(ServiceContext& context, const nlohmann::json& payload);
// check_run / check_suite `rerequested` (the Checks tab's "Re-run"): the job(s) run again.
HandledEvent handle_check_run(ServiceContext& context, const nlohmann::json& payload);
HandledEvent handle_check_suite(ServiceContext& context, const nlohmann::json& payload);

// Reads payload[a][b]... as a string (numbers as their digits); throws PayloadError
// naming the path when it is missing.
std::string payload_string(const nlohmann::json& payload, std::initializer_list<const char*> path);
// The installation id of the payload, empty when it has none (a webhook of the App
// itself, or a repository webhook).
std::string installation_of(const nlohmann::json& payload);

// The job a trigger makes for `repo`, from the service config and that repository's
// settings.
JobSpec job_spec_for(const ServiceConfig& config, const std::string& repo, const std::string& installation_id,
                     const std::string& commit, const std::string& trigger);

}  // namespace maxcode::bot::service
