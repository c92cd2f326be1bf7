#include "cli/bot_delivery.h"

#include <csignal>
#include <cstdlib>
#include <iostream>

#include "bot/delivery/pr_command.h"
#include "cli/github_credentials.h"
#include "runner/util/files.h"

namespace maxcode::cli {

namespace fs = std::filesystem;

namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_stop_signal(int) { g_stop.store(true); }

}  // namespace

BotDelivery::BotDelivery(const DeliveryInput& input) : input_(input) {
  options_.repo = input.repo;
  options_.base = input.base;
  options_.git_url = input.git_url;
  options_.dry_run = input.mode == DeliveryMode::kDryRun;
  options_.client.api_url = input.api_url;
  options_.client.user_agent = std::string("maxcode/") + MAXCODE_VERSION;
  options_.client.log = [](const std::string& line) { std::cerr << line << "\n"; };
}

PrRecord BotDelivery::deliver(const fs::path& result_dir) {
  bot::DeliverOptions options = options_;
  options.result_dir = result_dir;
  if (!options.dry_run && !tokens_) tokens_ = github_tokens_from_env(options.client, input_.repo);
  const bot::DeliveryReport report = bot::deliver(options, tokens_, std::cerr);
  PrRecord pr{bot::outcome_name(report.outcome), report.pr_number, report.pr_url, report.branch, report.title,
              report.message};
  if (options.dry_run) {
    write_text(result_dir / "pr-branch.txt", report.branch + "\n");
    write_text(result_dir / "pr-title.txt", report.title + "\n");
    write_text(result_dir / "pr-body.md", report.body);
    std::cout << "branch: " << report.branch << "\ntitle: " << report.title << "\n\n" << report.body << "\n";
    pr.message = "dry run: branch, title and body written to " + (result_dir / "pr-*").string();
  }
  return pr;
}

std::string env_value(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  return value ? value : "";
}

std::string git_token_from_env(const std::string& variable) {
  for (const std::string& name : {variable, std::string("GITHUB_TOKEN"), std::string("GH_TOKEN")})
    if (!name.empty() && !env_value(name).empty()) return env_value(name);
  return "";
}

const std::atomic<bool>* stop_on_signals() {
  std::signal(SIGTERM, on_stop_signal);
  std::signal(SIGINT, on_stop_signal);
  return &g_stop;
}

}  // namespace maxcode::cli
