// Where the GitHub client and git get their token: a fixed one (a personal access
// token, or the Actions GITHUB_TOKEN), or a GitHub App installation (app_auth.h).
#pragma once

#include <string>

namespace maxcode::bot {

class TokenSource {
 public:
  virtual ~TokenSource() = default;
  // A token valid now (an App source mints or refreshes one as needed).
  virtual std::string token() = 0;
  // The token was refused (401): forget a cached one so the next call makes a new one.
  virtual void invalidate() {}
  // Installation tokens can create check runs; personal tokens cannot.
  virtual bool is_app() const { return false; }
  // The login of the bot account the tokens act as, where the source can tell without a
  // token of its own ("<slug>[bot]" for an App); empty where it cannot.
  virtual std::string bot_login() { return ""; }
};

class StaticToken : public TokenSource {
 public:
  explicit StaticToken(std::string token) : token_(std::move(token)) {}
  std::string token() override { return token_; }

 private:
  std::string token_;
};

}  // namespace maxcode::bot
