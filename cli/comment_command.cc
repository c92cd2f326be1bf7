// `maxcode comment-command`: reads a comment body on stdin and prints the `/maxcode`
// command in it as GITHUB_OUTPUT lines (kind=, function=, policy=). The GitHub Action
// calls it so that its comment command is the App's, parsed by the App's own parser
// (bot/service/commands/command_parser.h), not by a second grammar in shell.
#include <iostream>
#include <iterator>

#include "bot/service/commands/command_parser.h"
#include "cli/subcommand.h"

namespace maxcode::cli {
namespace {

class CommentCommandSubcommand : public Subcommand {
 public:
  CLI::App* add_to(CLI::App& app) override {
    return app.add_subcommand("comment-command",
                              "parse the /maxcode command of a comment read on stdin (the App's grammar: optimize "
                              "[FUNCTION] [--policy P], status, cancel); prints kind=, function=, policy=; exit 2 "
                              "for an invalid command, 3 for none");
  }
  int run() override {
    const std::string body{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
    const auto command = bot::service::parse_comment_command(body);
    if (!command) {
      std::cerr << "maxcode comment-command: the comment holds no /maxcode command\n";
      return 3;
    }
    if (command->kind == bot::service::CommentCommand::Kind::kInvalid) {
      std::cerr << "maxcode comment-command: " << command->error << "\n";
      return 2;
    }
    // The parser allows only identifier characters and known policies: nothing here can
    // break a GITHUB_OUTPUT line.
    std::cout << "kind=" << bot::service::command_kind_name(command->kind) << "\nfunction=" << command->function
              << "\npolicy=" << command->policy << "\n";
    return 0;
  }
};

}  // namespace

std::unique_ptr<Subcommand> comment_command_command() { return std::make_unique<CommentCommandSubcommand>(); }

}  // namespace maxcode::cli
