#include "bot/github/commit_identity.h"

namespace maxcode::bot {

namespace {

GitIdentity identity_of(const nlohmann::json& user, const std::string& asked) {
  if (!user.is_object() || !user.contains("login") || !user["login"].is_string() || !user.contains("id") ||
      !user["id"].is_number_integer())
    throw GithubError(asked + ": no login and id in the answer", 200);
  const std::string login = user["login"].get<std::string>();
  return GitIdentity{login, noreply_email(user["id"].get<long long>(), login)};
}

}  // namespace

std::string noreply_email(long long id, const std::string& login) {
  return std::to_string(id) + "+" + login + "@users.noreply.github.com";
}

GitIdentity commit_identity(GithubClient& client, TokenSource& tokens, const GitIdentity& fallback, std::ostream& log) {
  const std::string bot = tokens.bot_login();
  if (!bot.empty()) return identity_of(client.get("/users/" + url_encode(bot)), "GET /users/" + bot);
  try {
    return identity_of(client.get("/user"), "GET /user");
  } catch (const GithubError& e) {
    if (e.status != 403) throw;
    log << "pr: the token may not read its own user (GET /user: 403); commits are by " << fallback.name << "\n";
    return fallback;
  }
}

}  // namespace maxcode::bot
