#include "bot/service/commands/command_parser.h"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <vector>

#include "runner/core/search_choices.h"
#include "runner/util/json_fields.h"

namespace maxcode::bot::service {

namespace {

bool is_identifier(const std::string& word) {
  if (word.empty() || word.size() > 200) return false;
  for (char c : word)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' || c == '~')) return false;
  return !std::isdigit(static_cast<unsigned char>(word[0]));
}

bool is_policy(const std::string& word) {
  const std::vector<std::string_view> known = search_policy_names();
  return std::find(known.begin(), known.end(), word) != known.end();
}

// "tune, replay, maxcode, cuda-llm, effilearner"
std::string policy_list() { return join_words(search_policy_names()); }

CommentCommand invalid(std::string why) {
  CommentCommand c;
  c.error = std::move(why);
  return c;
}

CommentCommand parse_line(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  // words[0] is "/maxcode".
  if (words.size() < 2) return invalid("no command after /maxcode (try: optimize [function] [--policy P], status, cancel)");
  const std::string& verb = words[1];
  CommentCommand c;
  if (verb == "status" || verb == "cancel") {
    if (words.size() > 2) return invalid("/maxcode " + verb + " takes no arguments");
    c.kind = verb == "status" ? CommentCommand::Kind::kStatus : CommentCommand::Kind::kCancel;
    return c;
  }
  if (verb != "optimize") return invalid("unknown command '" + verb + "' (try: optimize, status, cancel)");
  c.kind = CommentCommand::Kind::kOptimize;
  for (std::size_t i = 2; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "--policy" || w.rfind("--policy=", 0) == 0) {
      std::string value;
      if (w == "--policy") {
        if (i + 1 >= words.size()) return invalid("--policy needs a value (" + policy_list() + ")");
        value = words[++i];
      } else {
        value = w.substr(9);
      }
      if (!is_policy(value)) return invalid("unknown policy '" + value + "' (" + policy_list() + ")");
      c.policy = value;
    } else if (w.rfind("--", 0) == 0) {
      return invalid("unknown option '" + w + "' (only --policy)");
    } else if (c.function.empty()) {
      if (!is_identifier(w)) return invalid("'" + w + "' is not a function name");
      c.function = w;
    } else {
      return invalid("one function at a time ('" + c.function + "' and '" + w + "')");
    }
  }
  return c;
}

}  // namespace

std::optional<CommentCommand> parse_comment_command(const std::string& comment_body) {
  std::istringstream in(comment_body);
  for (std::string line; std::getline(in, line);) {
    std::size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos) continue;
    line = line.substr(start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("/maxcode", 0) != 0) continue;
    // "/maxcodefoo" is not a command.
    if (line.size() > 8 && line[8] != ' ' && line[8] != '\t') continue;
    return parse_line(line);
  }
  return std::nullopt;
}

const char* command_kind_name(CommentCommand::Kind kind) {
  switch (kind) {
    case CommentCommand::Kind::kOptimize: return "optimize";
    case CommentCommand::Kind::kStatus: return "status";
    case CommentCommand::Kind::kCancel: return "cancel";
    case CommentCommand::Kind::kInvalid: return "invalid";
  }
  return "?";
}

}  // namespace maxcode::bot::service
