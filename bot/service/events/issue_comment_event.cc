// `issue_comment`: a new comment holding a `/maxcode` command, on an issue or a pull
// request. Only people with write access to the repository may command the bot, and
// that is asked of GitHub (the collaborator permission endpoint), never read from the
// payload, which any commenter's client shapes. Edited and deleted comments, comments
// by bots (the bot's own replies among them) and ordinary comments do nothing.
#include "bot/github/github_client.h"
#include "bot/service/commands/command_handlers.h"

namespace maxcode::bot::service {

namespace {

bool has_write_access(GithubClient& client, const std::string& repo, const std::string& user) {
  const auto answer = client.get("/repos/" + repo + "/collaborators/" + url_encode(user) + "/permission");
  const std::string permission = answer.value("permission", "none");
  return permission == "admin" || permission == "maintain" || permission == "write";
}

}  // namespace

HandledEvent handle_issue_comment(ServiceContext& context, const nlohmann::json& payload) {
  const std::string repo = payload_string(payload, {"repository", "full_name"});
  const std::string action = payload_string(payload, {"action"});
  const std::string number = payload_string(payload, {"issue", "number"});
  const std::string where = repo + "#" + number;
  if (action != "created") return {"ignored", where + ": comment " + action};
  const std::string user = payload_string(payload, {"comment", "user", "login"});
  const std::string user_type = payload["comment"]["user"].value("type", "User");
  if (user_type == "Bot") return {"ignored", where + ": comment by a bot (" + user + ")"};
  const auto command = parse_comment_command(payload_string(payload, {"comment", "body"}));
  if (!command) return {"ignored", where + ": no /maxcode command"};
  context.metrics.count("maxcode_commands_total", "comment commands received",
                        {{"command", command_kind_name(command->kind)}});
  const std::string installation = installation_of(payload);
  if (installation.empty()) return {"ignored", where + ": the payload names no App installation"};

  GithubClient client(context.github.client_options(), context.github.installation(installation));
  if (!has_write_access(client, repo, user)) {
    // No reply: anyone can comment, and a bot that answers everyone is a spam relay.
    context.metrics.count("maxcode_commands_refused_total", "commands from users without write access");
    return {"refused", where + ": " + user + " has no write access; /maxcode " + command_kind_name(command->kind) + " ignored"};
  }
  const auto slash = repo.find('/');
  RepoApi api(client, repo.substr(0, slash), repo.substr(slash + 1));
  CommandRequest request{repo, installation, std::stoi(number), payload["issue"].contains("pull_request"), user, &api};
  switch (command->kind) {
    case CommentCommand::Kind::kOptimize: return run_optimize_command(context, request, *command);
    case CommentCommand::Kind::kStatus: return run_status_command(context, request);
    case CommentCommand::Kind::kCancel: return run_cancel_command(context, request);
    case CommentCommand::Kind::kInvalid: break;
  }
  api.upsert_comment(request.issue_number, "<!-- maxcode-usage -->",
                     "<!-- maxcode-usage -->\n**maxcode**: " + command->error +
                         "\n\nCommands: `/maxcode optimize [function] [--policy P]`, `/maxcode status`, `/maxcode cancel`.\n");
  return {"answered", where + ": invalid command from " + user + ": " + command->error};
}

}  // namespace maxcode::bot::service
