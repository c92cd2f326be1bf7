#include "bot/delivery/pr_command.h"

#include <cstdlib>
#include <iostream>

#include "bot/github/app_auth.h"
#include "bot/delivery/deliver.h"

namespace maxcode::bot {

std::shared_ptr<TokenSource> github_tokens_from_env(const ClientOptions& client, const std::string& repo) {
  AppCredentials app;
  if (app_credentials_from_env(app)) {
    // Scope the installation token to the one repository being delivered to.
    const std::string name = repo.substr(repo.find('/') + 1);
    return std::make_shared<AppInstallationTokens>(app, client, std::vector<std::string>{name});
  }
  for (const char* variable : {"GITHUB_TOKEN", "GH_TOKEN"})
    if (const char* token = std::getenv(variable); token && *token) return std::make_shared<StaticToken>(token);
  throw std::runtime_error(
      "no GitHub credentials: set GITHUB_TOKEN, or MAXCODE_APP_ID, MAXCODE_APP_KEY_FILE and MAXCODE_INSTALLATION_ID");
}

int run_pr_command(const PrCommandOptions& o) {
  try {
    DeliverOptions options;
    options.result_dir = o.result_dir;
    options.repo = o.repo;
    options.base = o.base;
    options.dry_run = o.dry_run;
    options.git_url = o.git_url;
    options.max_open_prs = o.max_open_prs;
    options.max_prs_per_hour = o.max_prs_per_hour;
    options.client.api_url = o.api_url;
    options.client.user_agent = std::string("maxcode/") + MAXCODE_VERSION;
    options.client.log = [](const std::string& line) { std::cerr << line << "\n"; };
    std::shared_ptr<TokenSource> tokens;
    if (!o.dry_run) tokens = github_tokens_from_env(options.client, o.repo);
    const DeliveryReport report = deliver(options, tokens, std::cerr);
    if (o.dry_run) {
      std::cout << "branch: " << report.branch << "\n";
      std::cout << "title: " << report.title << "\n\n";
      std::cout << report.body;
      return 0;
    }
    std::cerr << "pr: " << report.message << "\n";
    std::cout << outcome_name(report.outcome);
    if (report.pr_number) std::cout << " #" << report.pr_number << " " << report.pr_url;
    std::cout << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "maxcode pr: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace maxcode::bot
