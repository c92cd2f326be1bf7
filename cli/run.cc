// `maxcode run`: a repository to pull requests in one command (runner/job/run_job.h).
// This file is the edge: it reads the environment (tokens, SSH key), turns SIGTERM into
// a clean stop, and delivers winners through bot/ (runner/ never includes bot/).
#include <algorithm>
#include <cctype>
#include <iostream>
#include <string_view>

#include "cli/bot_delivery.h"
#include "cli/environment.h"
#include "cli/job_options.h"
#include "cli/subcommand.h"
#include "runner/job/job_report.h"
#include "runner/job/run_job.h"
#include "runner/util/files.h"

namespace maxcode::cli {
namespace {

namespace fs = std::filesystem;

// https://github.com/OWNER/NAME(.git) and git@github.com:OWNER/NAME(.git) -> OWNER/NAME.
// Scanned by hand: std::regex recursed once per character of a 50 MB repository field.
std::string github_repo_of(const std::string& url) {
  auto name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'; };
  auto all_name = [&](std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), name_char); };
  for (std::size_t host = url.find("github.com"); host != std::string::npos; host = url.find("github.com", host + 1)) {
    const std::size_t owner = host + 10;
    if (owner >= url.size() || (url[owner] != '/' && url[owner] != ':')) continue;
    const std::size_t slash = url.find('/', owner + 1);
    if (slash == std::string::npos || !all_name(std::string_view(url).substr(owner + 1, slash - owner - 1))) continue;
    std::string_view name = std::string_view(url).substr(slash + 1);
    if (!name.empty() && name.back() == '/') name.remove_suffix(1);
    if (name.size() > 4 && name.ends_with(".git")) name.remove_suffix(4);
    if (!all_name(name)) continue;
    return url.substr(owner + 1, slash - owner - 1) + "/" + std::string(name);
  }
  return "";
}

class Run : public Subcommand {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* cmd = app.add_subcommand(
        "run", "repository to pull requests: clone at a ref, profile, search the top targets within a budget, "
               "deliver each winner as a PR; writes OUT/job.json and OUT/report.html (docs/job.md)");
    cmd->add_option("REPOSITORY", repository_, "URL (https, ssh, file://) or local path of the repository");
    cmd->add_option("--job", job_file_, "the job's input document (docs/schema/job-input.schema.json)")
        ->check(CLI::ExistingFile);
    cmd->add_option("--ref", ref_, "branch, tag or commit (default: the remote's HEAD)");
    cmd->add_option("--out", out_, "output directory (default: maxcode-run)");
    cmd->add_option("--config", config_, "project file inside the repository (default: .maxcode.json)");
    cmd->add_option("--target", targets_, "function to search (repeatable; default: the hottest by profile)");
    cmd->add_option("--max-targets", max_targets_, "targets at most (default: 3)")->check(CLI::PositiveNumber);
    cmd->add_option("--min-share", min_share_, "a profiled target takes at least this share of the time (default: 0.05)")
        ->check(CLI::Range(0.0, 1.0));
    cmd->add_option("--budget", budget_,
                    "the whole job's budget, e.g. evaluations=16,wall_s=3600,tokens=200000,dollars=5,gpu_s=600");
    add_policy_option(cmd, policy_);
    cmd->add_option("--replay-dir", replay_dir_, "candidates for the replay policy, inside the repository");
    cmd->add_option("--deliver", deliver_, "pr | dry-run | none (default: pr when the GitHub repository is known)")
        ->check(CLI::IsMember({"pr", "dry-run", "none"}));
    cmd->add_flag("--dry-run", dry_run_, "write each PR's branch, title and body to files and print them");
    cmd->add_option("--github-repo", github_repo_, "OWNER/NAME for the PRs (default: from a github.com URL)");
    cmd->add_option("--base", base_, "base branch of the PRs (default: the repository's default branch)");
    cmd->add_option("--api-url", api_url_, "GitHub API root (default: https://api.github.com)");
    cmd->add_option("--git-url", git_url_, "push URL for the PR branches (default: from --api-url)");
    cmd->add_option("--resume", resume_, "continue the interrupted job whose --out directory this is")
        ->check(CLI::ExistingDirectory);
    cmd->add_flag("--keep-workspaces", keep_workspaces_, "keep candidate workspaces for debugging");
    cmd->add_flag("-q,--quiet", quiet_, "no progress lines");
    return cmd;
  }

  int run() override {
    Progress progress(stderr, quiet_);
    JobRun run;
    try {
      run.input = input();
    } catch (const std::exception& e) {
      std::cerr << "maxcode run: error: " << e.what() << "\n";
      return kJobUsage;
    }
    run.out = resume_.empty() ? (out_.empty() ? fs::path("maxcode-run") : out_) : resume_;
    run.resume = !resume_.empty();
    // Credentials are read here, once: the job itself reads no environment.
    run.git_token = git_token_from_env(run.input.git_token_env);
    run.ssh_key = env_value("MAXCODE_SSH_KEY");
    std::unique_ptr<BotDelivery> delivery;
    if (run.input.delivery.mode != DeliveryMode::kNone) delivery = std::make_unique<BotDelivery>(run.input.delivery);
    run.delivery = delivery.get();
    run.keep_workspaces = keep_workspaces_;
    run.env = read_environment();
    run.stop = stop_on_signals();

    const JobRecord job = run_job(run, progress);
    if (!job.targets.empty() || job.status != JobStatus::kFailed) std::cout << render_job_summary(job);
    if (job.exit_code != kJobUsage)
      progress.note("wrote " + (run.out / "job.json").string() + " and " + (run.out / "report.html").string());
    return job.exit_code;
  }

 private:
  // The input document: --job, else the command line; flags given override the file's.
  JobInput input() const {
    if (!resume_.empty()) {
      const fs::path record = resume_ / "job.json";
      if (!fs::exists(record)) throw JobInputError(record.string() + ": no job to resume there");
      return read_job_record(record).input;  // the interrupted job decides
    }
    JobInput in;
    if (!job_file_.empty()) in = load_job_input(job_file_);
    if (!repository_.empty()) in.repository = repository_;
    if (in.repository.empty()) throw JobInputError("no repository: give a URL or path, or --job FILE");
    if (!ref_.empty()) in.ref = ref_;
    if (!config_.empty()) in.config = config_;
    if (!targets_.empty()) in.targets = targets_;
    if (max_targets_ > 0) in.max_targets = max_targets_;
    if (min_share_ >= 0) in.min_share = min_share_;
    if (!budget_.empty()) in.budget = parse_budget_flag(budget_, in.budget);
    if (!policy_.empty()) in.policy = search_policy_from_name(policy_);  // a name of the table (add_policy_option)
    if (!replay_dir_.empty()) in.replay_dir = replay_dir_;
    DeliveryInput& d = in.delivery;
    if (!github_repo_.empty()) d.repo = github_repo_;
    if (d.repo.empty()) d.repo = github_repo_of(in.repository);
    if (!base_.empty()) d.base = base_;
    if (!api_url_.empty()) d.api_url = api_url_;
    if (!git_url_.empty()) d.git_url = git_url_;
    if (dry_run_) d.mode = DeliveryMode::kDryRun;
    else if (deliver_ == "pr") d.mode = DeliveryMode::kPr;
    else if (deliver_ == "none") d.mode = DeliveryMode::kNone;
    else if (deliver_ == "dry-run") d.mode = DeliveryMode::kDryRun;
    else if (job_file_.empty() && !d.repo.empty()) d.mode = DeliveryMode::kPr;
    // Through the strict reader once more, so a flag's value meets the same checks.
    return parse_job_input(to_json(in), job_file_.empty() ? "command line" : job_file_.string());
  }

  std::string repository_, ref_, config_, budget_, policy_, replay_dir_, deliver_, github_repo_, base_, api_url_,
      git_url_;
  fs::path job_file_, out_, resume_;
  std::vector<std::string> targets_;
  int max_targets_ = 0;
  double min_share_ = -1;
  bool dry_run_ = false, keep_workspaces_ = false, quiet_ = false;
};

}  // namespace

std::unique_ptr<Subcommand> run_command() { return std::make_unique<Run>(); }

}  // namespace maxcode::cli
