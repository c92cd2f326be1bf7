// Delivery: a result directory becomes a pull request, idempotently.
//
//   1. Read and check the result (delivery_input.h); compose branch, title and body.
//   2. Fetch the repository; the run's commit must be there. Hash the original function
//      at that commit (the target hash).
//   3. Look for PRs from the target's branch. An open one is updated. One that was closed
//      without merging means "ignored": nothing happens while the target hash is the
//      one recorded in its metadata; once the function changed, a new PR is opened.
//   4. The branch may hold only maxcode's own commits (bot identity and a Maxcode-Run
//      trailer). Any other commit: the branch is left alone and the open PR gets a
//      comment saying why. A branch protected on GitHub is not pushed to either.
//   5. Commit the patch onto the run's commit (deterministic: same result, same commit)
//      and push it when it differs from the branch; open or update the PR; create the
//      labels if missing and add them; with App credentials, record a check run.
// New PRs are also held back when the repository already has `max_open_prs` open maxcode
// PRs or `max_prs_per_hour` were opened in the last hour.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "bot/github/git_remote.h"
#include "bot/github/github_client.h"
#include "bot/github/token_source.h"

namespace maxcode::bot {

struct DeliverOptions {
  std::filesystem::path result_dir;
  std::string repo;           // OWNER/NAME
  std::string base;           // base branch of the PR; empty = the repository's default
  bool dry_run = false;       // compose and print; no network, no git
  std::string git_url;        // empty = derived from the API URL (github.com or Enterprise)
  ClientOptions client;       // API URL, retries, waits
  // Who the commit is by; unset = the account the tokens act as (commit_identity.h).
  std::optional<GitIdentity> identity;
  std::vector<std::string> labels = {"maxcode", "performance"};
  int max_open_prs = 10;      // open maxcode PRs per repository
  int max_prs_per_hour = 5;   // new maxcode PRs per repository and hour
  bool check_run = true;      // only possible with App credentials
  std::filesystem::path work_dir;  // where the temporary clone goes (default: system temp)
};

enum class DeliveryOutcome {
  kDryRun,
  kCreated,         // a new PR
  kUpdated,         // the open PR got a new commit and/or a new body
  kUnchanged,       // the open PR already shows this result
  kIgnored,         // closed unmerged by a person, target unchanged: leave it be
  kAlreadyMerged,   // this target's change is merged already
  kForeignCommits,  // the branch has someone else's commits: left alone
  kProtected,       // the branch is protected
  kHeldBack,        // per-repository PR limits reached
};
const char* outcome_name(DeliveryOutcome outcome);

struct DeliveryReport {
  DeliveryOutcome outcome = DeliveryOutcome::kDryRun;
  std::string branch, title, body;
  int pr_number = 0;
  std::string pr_url;
  std::string commit;     // the commit on the branch now
  bool pushed = false;
  std::string message;    // one line for people
  std::vector<std::string> trimmed;
};

// Throws DeliveryError (bad input), GitError or GithubError (with GitHub's reason).
DeliveryReport deliver(const DeliverOptions& options, std::shared_ptr<TokenSource> tokens,
                       std::ostream& log);

// https://api.github.com -> https://github.com/OWNER/NAME.git;
// https://ghe.example/api/v3 -> https://ghe.example/OWNER/NAME.git.
std::string default_git_url(const std::string& api_url, const std::string& repo);

}  // namespace maxcode::bot
