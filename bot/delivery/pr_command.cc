#include "bot/delivery/pr_command.h"

#include <iostream>

#include "bot/delivery/deliver.h"

namespace maxcode::bot {

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
    if (!o.dry_run) tokens = o.tokens(options.client, o.repo);
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
