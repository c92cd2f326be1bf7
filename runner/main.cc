// The `maxcode` command line.
#include <CLI/CLI.hpp>

#include <iostream>

#include "bot/pr_command.h"
#include "runner/job.h"
#include "runner/profile/command.h"

namespace {

void add_common(CLI::App* cmd, maxcode::JobOptions& o) {
  cmd->add_option("REPO", o.repo, "repository to work on (default: current directory)");
  cmd->add_option("--config", o.config, "project file (default: REPO/.maxcode.json)");
  cmd->add_option("--out", o.out, "output directory (default: maxcode-out)");
  cmd->add_option("--signature", o.signature, "text of the signature that picks one overload");
  cmd->add_flag("--keep-workspaces", o.keep_workspaces, "keep candidate workspaces for debugging");
  cmd->add_flag("-q,--quiet", o.quiet, "no progress line");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"maxcode: makes C++ and CUDA functions faster, and proves it"};
  app.set_version_flag("--version", std::string(MAXCODE_VERSION));
  app.require_subcommand(1);

  maxcode::JobOptions optimize_options;
  CLI::App* optimize = app.add_subcommand(
      "optimize", "search for a faster version of a function; writes result.json, report.md, report.html, "
                  "patch.diff, trajectory.jsonl, checkpoint.json and rollouts.sqlite");
  add_common(optimize, optimize_options);
  optimize->add_option("--function", optimize_options.function,
                       "function to optimize (default: the config's targets.functions[0])");
  optimize->add_option("--policy", optimize_options.policy,
                       "tune | replay | maxcode | cuda-llm | effilearner (default: search.policy)")
      ->check(CLI::IsMember({"tune", "replay", "maxcode", "cuda-llm", "effilearner"}));
  optimize->add_option("--resume", optimize_options.resume,
                       "continue the interrupted run whose --out directory this is (its checkpoint.json)")
      ->check(CLI::ExistingDirectory);
  optimize->add_option("--db", optimize_options.db,
                       "rollout store (SQLite) to record every step in (default: OUT/rollouts.sqlite)");
  optimize->add_option("--replay-dir", optimize_options.replay_dir,
                       "directory of candidate files for the replay policy");
  optimize->add_option("--max-evaluations", optimize_options.max_evaluations,
                       "candidates to evaluate at most (default: search.max_evaluations)")
      ->check(CLI::PositiveNumber);

  maxcode::JobOptions eval_options;
  CLI::App* eval = app.add_subcommand(
      "eval", "evaluate one candidate (a new definition or a unified diff) against the original");
  add_common(eval, eval_options);
  eval->add_option("--function", eval_options.function, "the target function")->required();
  eval->add_option("--candidate", eval_options.candidate_file, "candidate file")
      ->required()
      ->check(CLI::ExistingFile);

  std::filesystem::path export_db, export_out = "maxcode-export";
  CLI::App* export_command = app.add_subcommand(
      "export", "training data from a rollout store: sft.jsonl (slow/fast pairs), rtg.jsonl (reward-to-go "
                "samples), rewards.jsonl (staged rewards)");
  export_command->add_option("--db", export_db, "the rollout store (rollouts.sqlite)")
      ->required()
      ->check(CLI::ExistingFile);
  export_command->add_option("--out", export_out, "output directory (default: maxcode-export)");

  maxcode::bot::PrCommandOptions pr_options;
  CLI::App* pr = app.add_subcommand(
      "pr", "deliver a result directory as a GitHub pull request (token: GITHUB_TOKEN, or a GitHub App "
            "via MAXCODE_APP_ID, MAXCODE_APP_KEY_FILE, MAXCODE_INSTALLATION_ID)");
  pr->add_option("--result", pr_options.result_dir, "the --out directory of `maxcode optimize`")
      ->required()
      ->check(CLI::ExistingDirectory);
  pr->add_option("--repo", pr_options.repo, "GitHub repository, OWNER/NAME")->required();
  pr->add_option("--base", pr_options.base, "base branch of the PR (default: the repository's default branch)");
  pr->add_flag("--dry-run", pr_options.dry_run, "print the branch, title and body; push and open nothing");
  pr->add_option("--api-url", pr_options.api_url, "GitHub API root (GitHub Enterprise: https://HOST/api/v3)");
  pr->add_option("--git-url", pr_options.git_url, "clone and push URL (default: from --api-url and --repo)");
  pr->add_option("--max-open-prs", pr_options.max_open_prs, "open maxcode PRs per repository at most")
      ->check(CLI::PositiveNumber);
  pr->add_option("--max-prs-per-hour", pr_options.max_prs_per_hour, "new maxcode PRs per repository and hour at most")
      ->check(CLI::PositiveNumber);

  maxcode::ProfileOptions profile_options;
  CLI::App* profile = app.add_subcommand(
      "profile", "run the benchmarks under the CPU sampler and the CUDA profiler; prints the "
                 "hottest functions and kernels and writes profile.json");
  profile->add_option("REPO", profile_options.repo, "repository to profile (default: current directory)");
  profile->add_option("--config", profile_options.config, "project file (default: REPO/.maxcode.json)");
  profile->add_option("--out", profile_options.out, "output directory (default: maxcode-out)");
  profile->add_option("--top", profile_options.top, "rows to print (default: 20)")->check(CLI::PositiveNumber);
  profile->add_option("--min-share", profile_options.min_share,
                      "leave out rows below this share of the time (default: 0.005)")
      ->check(CLI::Range(0.0, 1.0));
  profile->add_option("--import", profile_options.imports,
                      "rank existing profiles instead (perf script text, callgrind.out.*, gperftools "
                      "CPU profile, maxcode sampler or GPU files); repeatable")
      ->check(CLI::ExistingFile);
  profile->add_flag("!--no-build", profile_options.build,
                    "run the benchmarks in REPO as it is built now, without copying or building");
  profile->add_flag("!--no-debug-flags", profile_options.debug_flags,
                    "build with the project's flags only (default adds -g -fno-omit-frame-pointer "
                    "through CFLAGS, CXXFLAGS and CUDAFLAGS)");
  profile->add_flag("--keep-workspaces", profile_options.keep_workspaces,
                    "keep the build and the raw profile files for debugging");
  profile->add_flag("-q,--quiet", profile_options.quiet, "no progress line");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;  // usage error
  }
  if (optimize->parsed()) return maxcode::run_optimize(optimize_options);
  if (eval->parsed()) return maxcode::run_eval(eval_options);
  if (export_command->parsed()) return maxcode::run_export(export_db, export_out);
  if (profile->parsed()) return maxcode::run_profile(profile_options);
  if (pr->parsed()) return maxcode::bot::run_pr_command(pr_options);
  return 2;
}
