// `maxcode serve`: the GitHub App service (bot/service/server.h, docs/service.md).
#include <cstdlib>
#include <iostream>

#include "bot/service/server.h"
#include "bot/service/service_config.h"
#include "bot/service/queue/sql_database.h"
#include "cli/subcommand.h"

namespace maxcode::cli {
namespace {

// The secrets from the environment variables the config names (read here, at the CLI);
// throws ServiceConfigError naming a variable that is required and unset.
bot::service::ServeSecrets secrets_from_env(const bot::service::ServiceConfig& config) {
  auto env = [](const std::string& name) {
    const char* v = std::getenv(name.c_str());
    return std::string(v ? v : "");
  };
  bot::service::ServeSecrets s{env(config.webhook_secret_env), env(config.admin_token_env), env(config.runner_token_env),
                               env(config.store_password_env)};
  if (s.webhook_secret.empty())
    throw bot::service::ServiceConfigError("the webhook secret is required: set " + config.webhook_secret_env +
                                           " (the secret entered in the GitHub App's settings)");
  return s;
}

class Serve : public Subcommand {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* cmd = app.add_subcommand("serve", "run the GitHub App service: webhooks, job queue, runner protocol, dashboard");
    cmd->add_option("--config", config_, "service.json (docs/service.md)")->check(CLI::ExistingFile);
    cmd->add_option("--listen", listen_, "HOST:PORT to listen on (overrides listen)");
    cmd->add_option("--db", db_, "SQLite file of the queue (overrides db)");
    cmd->add_option("--store", store_, "postgresql:// URL of a store shared by replicas (overrides store)");
    cmd->add_option("--webhook-secret-env", secret_env_, "environment variable holding the webhook secret");
    cmd->add_option("--github-api", api_, "GitHub API root (overrides github.api_url)");
    cmd->add_option("--app-id", app_id_, "GitHub App id (overrides github.app_id)");
    cmd->add_option("--app-key", app_key_, "the App's private key, PEM (overrides github.app_key_file)");
    return cmd;
  }
  int run() override {
    try {
      using namespace bot::service;
      ServiceConfig c = config_.empty() ? ServiceConfig{} : load_service_config(config_);
      if (!listen_.empty()) parse_listen(listen_, "--listen", c.host, c.port);
      if (!db_.empty()) c.db = db_;
      if (!store_.empty()) {
        if (!is_postgres_url(store_)) throw ServiceConfigError("--store: expected a postgresql:// URL (the SQLite file is --db)");
        c.store = store_;
      }
      if (!secret_env_.empty()) c.webhook_secret_env = secret_env_;
      if (!api_.empty()) c.api_url = api_;
      if (!app_id_.empty()) c.app_id = app_id_;
      if (!app_key_.empty()) c.app_key_file = app_key_;
      return run_service(c, secrets_from_env(c));
    } catch (const std::exception& e) {
      std::cerr << "maxcode serve: error: " << e.what() << "\n";
      return 1;
    }
  }

 private:
  std::string config_, listen_, db_, store_, secret_env_, api_, app_id_, app_key_;
};

}  // namespace

std::unique_ptr<Subcommand> serve_command() { return std::make_unique<Serve>(); }

}  // namespace maxcode::cli
