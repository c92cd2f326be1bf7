// Comment commands: a line of an issue or pull-request comment that starts with
// `/maxcode`. The first such line counts; the rest of the comment is ignored.
//
//   /maxcode optimize [FUNCTION] [--policy POLICY]
//   /maxcode status
//   /maxcode cancel
#pragma once

#include <optional>
#include <string>

namespace maxcode::bot::service {

struct CommentCommand {
  enum class Kind { kOptimize, kStatus, kCancel, kInvalid };
  Kind kind = Kind::kInvalid;
  std::string function;  // optimize: empty = the profiler's top targets
  std::string policy;    // optimize: empty = the repository's configured policy
  std::string error;     // kInvalid: why, in a sentence the reply comment can show
};

// nullopt when the comment holds no `/maxcode` line (an ordinary comment).
std::optional<CommentCommand> parse_comment_command(const std::string& comment_body);

const char* command_kind_name(CommentCommand::Kind kind);

}  // namespace maxcode::bot::service
