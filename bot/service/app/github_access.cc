#include "bot/service/app/github_access.h"

#include <algorithm>
#include <fstream>
#include <vector>
#include <sstream>

#include "bot/github/api_route.h"
#include "runner/util/files.h"

namespace maxcode::bot::service {

GithubAccess::GithubAccess(const ServiceConfig& config, Metrics& metrics, ServiceLog& log)
    : config_(config), metrics_(metrics), log_(log) {
  credentials_.app_id = config.app_id;
  if (config.app_id.empty()) return;
  if (config.app_key_file.empty())
    throw ServiceConfigError("github.app_id is set, so github.app_key_file (the App's private key, PEM) is needed too");
  std::optional<std::string> pem = try_read_text(config.app_key_file);
  if (!pem) throw ServiceConfigError("github.app_key_file: cannot read " + config.app_key_file.string());
  credentials_.private_key_pem = std::move(*pem);
  if (credentials_.private_key_pem.find("PRIVATE KEY") == std::string::npos)
    throw ServiceConfigError("github.app_key_file: " + config.app_key_file.string() + " holds no PEM private key");
}

ClientOptions GithubAccess::client_options() const {
  ClientOptions o;
  o.api_url = config_.api_url;
  o.user_agent = std::string("maxcode-service/") + MAXCODE_VERSION;
  // A worker thread does not sleep through a rate limit: the action fails at once and is
  // deferred in the store for as long as GitHub asks (github_retry.h). Server errors of
  // idempotent requests are still retried here, briefly.
  o.max_wait_s = 0;
  o.max_attempts = 3;
  o.log = [this](const std::string& line) { log_("github", line); };
  o.observe = [this](const std::string& method, const std::string& path, const HttpResult& r) {
    metrics_.count("maxcode_github_api_calls_total", "GitHub API requests by route and status",
                   {{"method", method}, {"route", api_route(path)}, {"status", std::to_string(r.status)}});
    const std::string remaining = r.header("x-ratelimit-remaining");
    if (!remaining.empty()) {
      try {
        metrics_.set("maxcode_github_rate_limit_remaining", "x-ratelimit-remaining of the last GitHub answer",
                     {{"resource", r.header("x-ratelimit-resource").empty() ? "core" : r.header("x-ratelimit-resource")}},
                     std::stod(remaining));
      } catch (...) {
      }
    }
    if (r.status == 403 || r.status == 429 || r.status >= 500 || r.status == 0)
      metrics_.count("maxcode_github_api_errors_total", "GitHub API answers that were errors or rate limits",
                     {{"status", std::to_string(r.status)}});
  };
  return o;
}

AppCredentials GithubAccess::with_installation(const std::string& installation_id) const {
  if (!configured())
    throw std::runtime_error("the service has no GitHub App credentials (github.app_id, github.app_key_file)");
  if (installation_id.empty()) throw std::runtime_error("the webhook names no App installation");
  AppCredentials c = credentials_;
  c.installation_id = installation_id;
  return c;
}

std::shared_ptr<TokenSource> GithubAccess::installation(const std::string& installation_id) {
  std::lock_guard lock(mutex_);
  auto& tokens = tokens_[installation_id];
  if (!tokens) tokens = std::make_shared<AppInstallationTokens>(with_installation(installation_id), client_options());
  return tokens;
}

std::string GithubAccess::runner_token(const std::string& installation_id, const std::string& repo_name) {
  AppInstallationTokens tokens(with_installation(installation_id), client_options(), {repo_name},
                               nlohmann::json{{"contents", "read"}});
  return tokens.token();
}

}  // namespace maxcode::bot::service
