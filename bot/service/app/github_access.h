// The service's way to GitHub: as the App, per installation. Installation tokens are
// minted from the App's private key (which only the service holds) and cached per
// installation; runners get their own short-lived token, read-only and for one
// repository. Every API answer is counted in the metrics (calls by status, the rate
// limit left).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "bot/github/app_auth.h"
#include "bot/github/github_client.h"
#include "bot/service/operations/metrics.h"
#include "bot/service/service_config.h"
#include "bot/service/operations/service_log.h"

namespace maxcode::bot::service {

class GithubAccess {
 public:
  // Reads the App's private key from config.app_key_file; throws ServiceConfigError
  // naming the file when it cannot. Without app_id the service can take webhooks but
  // not act on GitHub (each action then fails with a clear error).
  GithubAccess(const ServiceConfig& config, Metrics& metrics, ServiceLog& log);

  bool configured() const { return !credentials_.app_id.empty(); }
  ClientOptions client_options() const;
  // The App acting on `installation_id` (all its permissions).
  std::shared_ptr<TokenSource> installation(const std::string& installation_id);
  // A fresh token for a runner: contents read, the one repository `repo_name`.
  std::string runner_token(const std::string& installation_id, const std::string& repo_name);

 private:
  AppCredentials with_installation(const std::string& installation_id) const;
  const ServiceConfig& config_;
  Metrics& metrics_;
  ServiceLog& log_;
  AppCredentials credentials_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<AppInstallationTokens>> tokens_;
};

}  // namespace maxcode::bot::service
