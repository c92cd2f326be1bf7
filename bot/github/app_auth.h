// GitHub App authentication: an RS256 JWT (jwt.h) exchanged at
// POST /app/installations/{id}/access_tokens for an installation token, which is
// cached and reused until 5 minutes before it expires (GitHub gives them an hour).
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "bot/github/github_client.h"
#include "bot/github/token_source.h"

namespace maxcode::bot {

struct AppCredentials {
  std::string app_id;
  std::string private_key_pem;
  std::string installation_id;
};

class AppInstallationTokens : public TokenSource {
 public:
  // `repositories` (names without owner) narrows the token to those repositories.
  // `permissions` ({"contents": "read"}) narrows what the token may do; null = all the
  // installation has (a runner gets a read-only one, docs/service.md).
  AppInstallationTokens(AppCredentials credentials, ClientOptions options,
                        std::vector<std::string> repositories = {}, nlohmann::json permissions = nullptr);
  std::string token() override;
  void invalidate() override;
  bool is_app() const override { return true; }
  // "<slug>[bot]", the slug asked of GitHub once (GET /app, with the App's JWT).
  std::string bot_login() override;

  int exchanges() const { return exchanges_; }  // installation tokens minted so far
  std::int64_t expires_at() const { return expires_at_; }

 private:
  AppCredentials credentials_;
  ClientOptions options_;
  std::vector<std::string> repositories_;
  nlohmann::json permissions_;
  std::mutex mutex_;
  std::string token_;
  std::string slug_;
  std::int64_t expires_at_ = 0;
  int exchanges_ = 0;
};

// "2016-07-11T22:14:10Z" -> seconds since the epoch; throws std::invalid_argument.
std::int64_t parse_github_time(const std::string& text);

}  // namespace maxcode::bot
