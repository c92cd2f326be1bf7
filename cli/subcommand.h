// One `maxcode` subcommand: it declares its options on the parser, and runs when the
// command line names it. main.cc only wires the subcommands together; each lives in a
// file of its own (optimize.cc, eval.cc, ...), so a new one is a new file.
#pragma once

#include <memory>
#include <vector>

#include <CLI/CLI.hpp>

namespace maxcode::cli {

class Subcommand {
 public:
  virtual ~Subcommand() = default;
  // Adds the subcommand and its options to `app`; the values land in this object.
  virtual CLI::App* add_to(CLI::App& app) = 0;
  // Runs it; the return value is the process's exit code (README "Exit codes").
  virtual int run() = 0;
};

std::unique_ptr<Subcommand> init_command();
std::unique_ptr<Subcommand> optimize_command();
std::unique_ptr<Subcommand> eval_command();
std::unique_ptr<Subcommand> export_command();
std::unique_ptr<Subcommand> profile_command();
std::unique_ptr<Subcommand> pr_command();
std::unique_ptr<Subcommand> run_command();
std::unique_ptr<Subcommand> sweep_command();
std::unique_ptr<Subcommand> serve_command();
std::unique_ptr<Subcommand> runner_command();
std::unique_ptr<Subcommand> app_manifest_command();
std::unique_ptr<Subcommand> app_setup_command();
std::unique_ptr<Subcommand> check_input_command();
std::unique_ptr<Subcommand> comment_command_command();

}  // namespace maxcode::cli
