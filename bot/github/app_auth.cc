#include "bot/github/app_auth.h"

#include <chrono>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "bot/github/jwt.h"
#include "runner/util/files.h"

namespace maxcode::bot {

namespace {

// Refresh this long before expiry, so a token never dies in the middle of a delivery.
constexpr std::int64_t kRefreshMargin = 300;

}  // namespace

std::int64_t parse_github_time(const std::string& text) {
  std::tm tm{};
  std::istringstream in(text);
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
  if (in.fail()) throw std::invalid_argument("not a GitHub timestamp: " + text);
  return static_cast<std::int64_t>(timegm(&tm));
}

AppInstallationTokens::AppInstallationTokens(AppCredentials credentials, ClientOptions options,
                                             std::vector<std::string> repositories, nlohmann::json permissions)
    : credentials_(std::move(credentials)),
      options_(std::move(options)),
      repositories_(std::move(repositories)),
      permissions_(std::move(permissions)) {
  if (!options_.now)
    options_.now = [] {
      return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    };
}

std::string AppInstallationTokens::token() {
  std::lock_guard lock(mutex_);
  const std::int64_t now = options_.now();
  if (!token_.empty() && now < expires_at_ - kRefreshMargin) return token_;
  // The exchange authenticates with the JWT, not with a token from this source.
  GithubClient client(options_, nullptr);
  const std::string jwt = make_app_jwt(credentials_.app_id, credentials_.private_key_pem, now);
  nlohmann::json body = nlohmann::json::object();
  if (!repositories_.empty()) body["repositories"] = repositories_;
  if (permissions_.is_object()) body["permissions"] = permissions_;
  const HttpResult r = client.request("POST", "/app/installations/" + url_encode(credentials_.installation_id) + "/access_tokens",
                                      body, "Bearer " + jwt);
  const auto answer = nlohmann::json::parse(r.body, nullptr, false);
  if (!answer.is_object() || !answer.contains("token") || !answer["token"].is_string())
    throw GithubError("GitHub App token exchange: no token in the answer", r.status);
  token_ = answer["token"].get<std::string>();
  // GitHub says when; without it assume the documented hour.
  expires_at_ = answer.contains("expires_at") && answer["expires_at"].is_string()
                    ? parse_github_time(answer["expires_at"].get<std::string>())
                    : now + 3600;
  ++exchanges_;
  return token_;
}

std::string AppInstallationTokens::bot_login() {
  std::lock_guard lock(mutex_);
  if (slug_.empty()) {
    GithubClient client(options_, nullptr);
    const std::string jwt = make_app_jwt(credentials_.app_id, credentials_.private_key_pem, options_.now());
    const HttpResult r = client.request("GET", "/app", std::nullopt, "Bearer " + jwt);
    const auto app = nlohmann::json::parse(r.body, nullptr, false);
    if (!app.is_object() || !app.contains("slug") || !app["slug"].is_string() || app["slug"].get<std::string>().empty())
      throw GithubError("GET /app: no slug in the answer", r.status);
    slug_ = app["slug"].get<std::string>();
  }
  return slug_ + "[bot]";
}

void AppInstallationTokens::invalidate() {
  std::lock_guard lock(mutex_);
  token_.clear();
  expires_at_ = 0;
}

}  // namespace maxcode::bot
