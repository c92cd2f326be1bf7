// Who maxcode's commits are by. GitHub links a commit to an account through its email:
// `<id>+<login>@users.noreply.github.com`. For an App that is its bot account,
// `<slug>[bot]`, so commits show the App's name and avatar whatever the App is called.
#pragma once

#include <ostream>
#include <string>

#include "bot/github/git_remote.h"
#include "bot/github/github_client.h"
#include "bot/github/token_source.h"

namespace maxcode::bot {

// "<id>+<login>@users.noreply.github.com".
std::string noreply_email(long long id, const std::string& login);

// The account `tokens` act as, asked of GitHub: an App's bot user (GET /app for its slug,
// GET /users/<slug>[bot] for its id), else the token's own user (GET /user). A token
// that may not ask (an integration token such as Actions' GITHUB_TOKEN gets 403 on
// GET /user) keeps `fallback`, said in `log`. Throws GithubError for other failures.
GitIdentity commit_identity(GithubClient& client, TokenSource& tokens, const GitIdentity& fallback, std::ostream& log);

}  // namespace maxcode::bot
