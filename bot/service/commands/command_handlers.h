// The comment commands (command_parser.h), each in a file of its own. They run only
// after issue_comment_event.cc has checked that the commenter has write access.
#pragma once

#include <string>

#include "bot/github/github_repo.h"
#include "bot/service/commands/command_parser.h"
#include "bot/service/events/event_handlers.h"

namespace maxcode::bot::service {

struct CommandRequest {
  std::string repo;  // OWNER/NAME
  std::string installation_id;
  int issue_number = 0;
  bool on_pull_request = false;
  std::string user;
  RepoApi* api = nullptr;  // as the App installation
};

HandledEvent run_optimize_command(ServiceContext& context, const CommandRequest& request, const CommentCommand& command);
HandledEvent run_status_command(ServiceContext& context, const CommandRequest& request);
HandledEvent run_cancel_command(ServiceContext& context, const CommandRequest& request);

}  // namespace maxcode::bot::service
