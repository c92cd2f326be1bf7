// `maxcode pr`: deliver a result directory as a GitHub pull request.
#include "bot/delivery/pr_command.h"
#include "cli/github_credentials.h"
#include "cli/subcommand.h"

namespace maxcode::cli {
namespace {

class Pr : public Subcommand {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* cmd = app.add_subcommand(
        "pr", "deliver a result directory as a GitHub pull request (token: GITHUB_TOKEN, or a GitHub App "
              "via MAXCODE_APP_ID, MAXCODE_APP_KEY_FILE, MAXCODE_INSTALLATION_ID)");
    cmd->add_option("--result", o_.result_dir, "the --out directory of `maxcode optimize`")
        ->required()
        ->check(CLI::ExistingDirectory);
    cmd->add_option("--repo", o_.repo, "GitHub repository, OWNER/NAME")->required();
    cmd->add_option("--base", o_.base, "base branch of the PR (default: the repository's default branch)");
    cmd->add_flag("--dry-run", o_.dry_run, "print the branch, title and body; push and open nothing");
    cmd->add_option("--api-url", o_.api_url, "GitHub API root (GitHub Enterprise: https://HOST/api/v3)");
    cmd->add_option("--git-url", o_.git_url, "clone and push URL (default: from --api-url and --repo)");
    cmd->add_option("--max-open-prs", o_.max_open_prs, "open maxcode PRs per repository at most")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--max-prs-per-hour", o_.max_prs_per_hour, "new maxcode PRs per repository and hour at most")
        ->check(CLI::PositiveNumber);
    return cmd;
  }
  int run() override {
    o_.tokens = github_tokens_from_env;  // the environment is read here, at the CLI
    return bot::run_pr_command(o_);
  }

 private:
  bot::PrCommandOptions o_;
};

}  // namespace

std::unique_ptr<Subcommand> pr_command() { return std::make_unique<Pr>(); }

}  // namespace maxcode::cli
