// `maxcode optimize`: search for a faster version of one function.
#include "cli/environment.h"
#include "cli/job_options.h"
#include "cli/subcommand.h"
#include "runner/job/job.h"

namespace maxcode::cli {
namespace {

class Optimize : public Subcommand {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* cmd = app.add_subcommand(
        "optimize", "search for a faster version of a function; writes result.json, report.md, report.html, "
                    "patch.diff, trajectory.jsonl, checkpoint.json and rollouts.sqlite");
    add_job_options(cmd, o_);
    cmd->add_option("--function", o_.function, "function to optimize (default: the config's targets.functions[0])");
    add_policy_option(cmd, o_.policy);
    cmd->add_option("--resume", o_.resume,
                    "continue the interrupted run whose --out directory this is (its checkpoint.json)")
        ->check(CLI::ExistingDirectory);
    cmd->add_option("--db", o_.db, "rollout store (SQLite) to record every step in (default: OUT/rollouts.sqlite)");
    cmd->add_option("--replay-dir", o_.replay_dir, "directory of candidate files for the replay policy");
    cmd->add_option("--max-evaluations", o_.max_evaluations,
                    "candidates to evaluate at most (default: search.max_evaluations)")
        ->check(CLI::PositiveNumber);
    return cmd;
  }
  int run() override {
    o_.env = read_environment();
    return run_optimize(o_);
  }

 private:
  JobOptions o_;
};

}  // namespace

std::unique_ptr<Subcommand> optimize_command() { return std::make_unique<Optimize>(); }

}  // namespace maxcode::cli
