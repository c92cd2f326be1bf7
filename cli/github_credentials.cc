#include "cli/github_credentials.h"

#include <cstdlib>
#include <stdexcept>

#include "bot/github/app_auth.h"
#include "runner/util/files.h"

namespace maxcode {

namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

std::shared_ptr<bot::TokenSource> github_tokens_from_env(const bot::ClientOptions& client, const std::string& repo) {
  if (const std::string app_id = env("MAXCODE_APP_ID"); !app_id.empty()) {
    const std::string key_file = env("MAXCODE_APP_KEY_FILE");
    const std::string installation = env("MAXCODE_INSTALLATION_ID");
    if (key_file.empty() || installation.empty())
      throw std::runtime_error("MAXCODE_APP_ID is set, so MAXCODE_APP_KEY_FILE and MAXCODE_INSTALLATION_ID are needed too");
    std::optional<std::string> pem = try_read_text(key_file);
    if (!pem) throw std::runtime_error("MAXCODE_APP_KEY_FILE: cannot read " + key_file);
    // Scope the installation token to the one repository being delivered to.
    const std::string name = repo.substr(repo.find('/') + 1);
    return std::make_shared<bot::AppInstallationTokens>(bot::AppCredentials{app_id, std::move(*pem), installation},
                                                        client, std::vector<std::string>{name});
  }
  for (const char* variable : {"GITHUB_TOKEN", "GH_TOKEN"})
    if (const std::string token = env(variable); !token.empty()) return std::make_shared<bot::StaticToken>(token);
  throw std::runtime_error(
      "no GitHub credentials: set GITHUB_TOKEN, or MAXCODE_APP_ID, MAXCODE_APP_KEY_FILE and MAXCODE_INSTALLATION_ID");
}

}  // namespace maxcode
