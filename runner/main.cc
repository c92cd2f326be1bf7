// The `maxcode` command line.
#include <CLI/CLI.hpp>

#include <iostream>

#include "runner/job.h"

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
      "optimize", "search for a faster version of a function; writes result.json, report.md, "
                  "patch.diff and trajectory.jsonl");
  add_common(optimize, optimize_options);
  optimize->add_option("--function", optimize_options.function,
                       "function to optimize (default: the config's targets.functions[0])");
  optimize->add_option("--policy", optimize_options.policy, "tune | replay (default: search.policy)")
      ->check(CLI::IsMember({"tune", "replay"}));
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
  return 2;
}
