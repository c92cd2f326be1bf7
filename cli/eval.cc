// `maxcode eval`: judge one candidate against the original.
#include "cli/environment.h"
#include "cli/job_options.h"
#include "cli/subcommand.h"
#include "runner/job/job.h"

namespace maxcode::cli {
namespace {

class Eval : public Subcommand {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* cmd = app.add_subcommand(
        "eval", "evaluate one candidate (a new definition or a unified diff) against the original");
    add_job_options(cmd, o_);
    cmd->add_option("--function", o_.function, "the target function")->required();
    cmd->add_option("--candidate", o_.candidate_file, "candidate file")->required()->check(CLI::ExistingFile);
    return cmd;
  }
  int run() override {
    o_.env = read_environment();
    return run_eval(o_);
  }

 private:
  JobOptions o_;
};

}  // namespace

std::unique_ptr<Subcommand> eval_command() { return std::make_unique<Eval>(); }

}  // namespace maxcode::cli
