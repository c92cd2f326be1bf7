// `maxcode pr`: deliver a result directory as a pull request (deliver.h), with the
// tokens the CLI read from the environment (cli/github_credentials.h).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "bot/github/github_client.h"
#include "bot/github/token_source.h"

namespace maxcode::bot {

struct PrCommandOptions {
  std::string result_dir;
  std::string repo;
  std::string base;
  bool dry_run = false;
  std::string api_url = "https://api.github.com";
  std::string git_url;
  int max_open_prs = 10;
  int max_prs_per_hour = 5;
  // Made once the options are known (the App's token is scoped to `repo`); not called
  // for a dry run. Throws when there are no credentials.
  std::function<std::shared_ptr<TokenSource>(const ClientOptions&, const std::string& repo)> tokens;
};

// Prints what it does on stderr and, for --dry-run, the branch, title and body on
// stdout. Returns 0 when the result was delivered or deliberately not delivered (the
// outcome says which), 1 on errors (bad input, refused credentials, GitHub errors).
int run_pr_command(const PrCommandOptions& options);

}  // namespace maxcode::bot
