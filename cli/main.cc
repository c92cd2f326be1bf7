// The `maxcode` command line: parses, then runs the one subcommand named. Each
// subcommand is a file of its own in this folder (subcommand.h).
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/environment.h"
#include "cli/subcommand.h"

int main(int argc, char** argv) {
  using namespace maxcode::cli;
  CLI::App app{"maxcode: makes C++ and CUDA functions faster, and proves it"};
  app.set_version_flag("--version", std::string(MAXCODE_VERSION));
  app.require_subcommand(1);

  std::vector<std::unique_ptr<Subcommand>> commands;
  commands.push_back(init_command());
  commands.push_back(optimize_command());
  commands.push_back(eval_command());
  commands.push_back(export_command());
  commands.push_back(pr_command());
  commands.push_back(profile_command());
  commands.push_back(run_command());
  commands.push_back(sweep_command());
  commands.push_back(serve_command());
  commands.push_back(runner_command());
  commands.push_back(app_manifest_command());
  commands.push_back(app_setup_command());
  commands.push_back(check_input_command());
  commands.push_back(comment_command_command());
  std::vector<CLI::App*> parsers;
  for (auto& c : commands) parsers.push_back(c->add_to(app));

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
  maxcode::apply_process_environment();
  for (std::size_t i = 0; i < commands.size(); ++i) {
    if (!parsers[i]->parsed()) continue;
    // Each subcommand reports its own errors; one that escapes it (a file system error on
    // a hostile input, a bug) is still a message and an exit code, never an abort.
    try {
      return commands[i]->run();
    } catch (const std::exception& e) {
      std::cerr << "maxcode: error: " << e.what() << "\n";
      return 1;
    }
  }
  return 2;
}
