// `maxcode pr`: deliver a result directory as a pull request (deliver.h), with the
// token from the environment: GITHUB_TOKEN, or a GitHub App through MAXCODE_APP_ID,
// MAXCODE_APP_KEY_FILE and MAXCODE_INSTALLATION_ID.
#pragma once

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
};

// Prints what it does on stderr and, for --dry-run, the branch, title and body on
// stdout. Returns 0 when the result was delivered or deliberately not delivered (the
// outcome says which), 1 on errors (bad input, refused credentials, GitHub errors).
int run_pr_command(const PrCommandOptions& options);

// The credentials of the environment: a GitHub App (MAXCODE_APP_ID, MAXCODE_APP_KEY_FILE,
// MAXCODE_INSTALLATION_ID; the token scoped to `repo`, OWNER/NAME), else GITHUB_TOKEN or
// GH_TOKEN. Throws std::runtime_error when there are none.
std::shared_ptr<TokenSource> github_tokens_from_env(const ClientOptions& client, const std::string& repo);

}  // namespace maxcode::bot
