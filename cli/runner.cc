// `maxcode runner`: pulls jobs from `maxcode serve` and runs them (bot/worker/runner_client.h).
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "bot/worker/runner_client.h"
#include "cli/subcommand.h"

namespace maxcode::cli {
namespace {

class Runner : public Subcommand {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* cmd = app.add_subcommand("runner", "take jobs from a maxcode service and run them");
    cmd->add_option("--server", o_.server, "the service's URL, http(s)://HOST:PORT")->required();
    cmd->add_option("--token-env", token_env_, "environment variable holding the runner token")->required();
    cmd->add_option("--labels", labels_, "what this runner offers, comma-separated (gpu,h100)");
    cmd->add_option("--name", o_.name, "runner name (default: HOST-PID)");
    cmd->add_option("--run-command", o_.run_command,
                    "the job command; runs as COMMAND --job FILE --out DIR (default: this maxcode's `run`)");
    cmd->add_option("--work-dir", o_.work_dir, "where checkouts and outputs go");
    cmd->add_option("--wait", o_.wait_s, "long-poll seconds")->check(CLI::Range(0.0, 120.0));
    cmd->add_option("--heartbeat", o_.heartbeat_s, "seconds between heartbeats")->check(CLI::Range(0.1, 600.0));
    cmd->add_option("--max-jobs", o_.max_jobs, "exit after this many jobs (0: never)");
    cmd->add_option("--job", o_.job_id, "claim this job only (a batch job started for it); exit when it is gone")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--idle-exit", o_.idle_exit_s, "exit after this many seconds without a job (0: never)");
    return cmd;
  }
  int run() override {
    const char* token = std::getenv(token_env_.c_str());
    if (!token || !*token) {
      std::cerr << "maxcode runner: error: " << token_env_ << " is not set (the service's runner token)\n";
      return 1;
    }
    o_.token = token;
    // The jobs this runner starts run untrusted code: they must not see the token.
    unsetenv(token_env_.c_str());
    std::stringstream in(labels_);
    for (std::string l; std::getline(in, l, ',');)
      if (!l.empty()) o_.labels.push_back(l);
    return bot::worker::run_runner(o_);
  }

 private:
  bot::worker::RunnerOptions o_;
  std::string token_env_, labels_;
};

}  // namespace

std::unique_ptr<Subcommand> runner_command() { return std::make_unique<Runner>(); }

}  // namespace maxcode::cli
