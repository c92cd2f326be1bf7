#include "runner/profile/callgrind_import.h"

#include <charconv>
#include <map>
#include <vector>

#include "runner/util/files.h"
#include "runner/util/names.h"

namespace maxcode {

namespace {

class Parser {
 public:
  Parser(std::string_view text, std::string label) : text_(text), label_(std::move(label)) {}

  CallStacks run() {
    std::size_t begin = 0;
    while (begin < text_.size()) {
      std::size_t end = text_.find('\n', begin);
      if (end == std::string_view::npos) end = text_.size();
      std::string_view line = text_.substr(begin, end - begin);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      begin = end + 1;
      ++line_number_;
      handle(line);
    }
    if (!saw_events_) fail("no 'events:' line: is this callgrind output?");
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const {
    throw ProfileFormatError(label_ + ":" + std::to_string(line_number_) + ": " + problem);
  }

  // "(12) name" defines id 12, "(12)" refers to it, "name" is plain.
  std::string name(std::string_view value, std::map<std::string, std::string>& table) {
    return strip_recursion(compressed_name(value, table));
  }

  // Callgrind names the levels of a recursion "fn'2", "fn'3" (--separate-recs): the
  // same function for us.
  static std::string strip_recursion(std::string name) {
    const std::size_t quote = name.rfind('\'');
    if (quote != std::string::npos && quote + 1 < name.size() &&
        name.find_first_not_of("0123456789", quote + 1) == std::string::npos)
      name.erase(quote);
    return name;
  }

  std::string compressed_name(std::string_view value, std::map<std::string, std::string>& table) {
    if (value.empty() || value.front() != '(') return std::string(value);
    const std::size_t close = value.find(')');
    if (close == std::string_view::npos) fail("unclosed '(' in a compressed name");
    const std::string id(value.substr(1, close - 1));
    std::string_view rest = value.substr(close + 1);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    if (!rest.empty()) return table[id] = std::string(rest);
    auto it = table.find(id);
    if (it == table.end()) fail("name id (" + id + ") used before it was defined");
    return it->second;
  }

  // One position column: absolute, "+n"/"-n" relative to the last, or "*" (same).
  std::uint64_t position(std::string_view token, std::uint64_t& last) {
    std::uint64_t value = 0;
    if (token == "*") return last;
    const char sign = token.front();
    if (sign == '+' || sign == '-') token.remove_prefix(1);
    int base = 10;
    if (token.size() > 2 && token[0] == '0' && (token[1] == 'x' || token[1] == 'X')) token.remove_prefix(2), base = 16;
    auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value, base);
    if (ec != std::errc() || end != token.data() + token.size()) fail("bad position '" + std::string(token) + "'");
    if (sign == '+') value = last + value;
    else if (sign == '-') value = last - value;
    last = value;
    return value;
  }

  void cost_line(std::string_view line) {
    std::vector<std::string_view> tokens;
    for (std::size_t i = 0; i < line.size();) {
      while (i < line.size() && line[i] == ' ') ++i;
      std::size_t b = i;
      while (i < line.size() && line[i] != ' ') ++i;
      if (i > b) tokens.push_back(line.substr(b, i - b));
    }
    if (tokens.size() < positions_) fail("a cost line needs " + std::to_string(positions_) + " position(s)");
    if (last_.size() < positions_) last_.resize(positions_, 0);
    std::uint64_t line_no = 0;
    for (std::size_t p = 0; p < positions_; ++p) {
      std::uint64_t v = position(tokens[p], last_[p]);
      if (p == line_column_) line_no = v;
    }
    std::uint64_t cost = 0;
    if (tokens.size() > positions_) {
      std::string_view t = tokens[positions_];
      auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), cost);
      if (ec != std::errc() || end != t.data() + t.size()) fail("bad cost '" + std::string(t) + "'");
    }
    if (after_calls_) {  // the inclusive cost of the call just named: not self cost
      after_calls_ = false;
      return;
    }
    if (function_.empty()) fail("a cost line before any 'fn='");
    if (cost == 0) return;
    CodeFrame frame;
    frame.function = demangle(function_);
    if (frame.function != function_) frame.symbol = function_;
    frame.module = object_;
    frame.file = file_;
    if (frame.file == "???") frame.file.clear();
    frame.line = frame.file.empty() ? 0 : static_cast<int>(line_no);
    CallStack stack;
    stack.weight = static_cast<double>(cost);
    stack.frames.push_back(out_.intern(frame));
    out_.stacks.push_back(std::move(stack));
  }

  void handle(std::string_view line) {
    if (line.empty() || line.front() == '#') return;
    const char c = line.front();
    if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '*') {
      if (!saw_events_) fail("a cost line before the 'events:' header");
      cost_line(line);
      return;
    }
    const std::size_t eq = line.find('=');
    const std::size_t colon = line.find(':');
    if (eq != std::string_view::npos && (colon == std::string_view::npos || eq < colon)) {
      name_line(line.substr(0, eq), line.substr(eq + 1));
      return;
    }
    if (colon != std::string_view::npos) {
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      header_line(line.substr(0, colon), value);
      return;
    }
    fail("not a callgrind line");
  }

  // `key=value`: the object, file or function of the cost lines that follow, a callee
  // and its call count.
  void name_line(std::string_view key, std::string_view value) {
    if (key == "ob") object_ = name(value, objects_);
    // fl, fi and fe all name the file of the cost lines that follow (fi/fe: code
    // inlined from another file), as callgrind_annotate reads them.
    else if (key == "fl" || key == "fi" || key == "fe")
      file_ = name(value, files_);
    else if (key == "fn")
      function_ = name(value, functions_);
    else if (key == "cob")
      name(value, objects_);
    else if (key == "cfi" || key == "cfl")
      name(value, files_);
    else if (key == "cfn")
      callee_ = demangle(name(value, functions_));
    else if (key == "calls") {
      std::uint64_t count = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), count);
      if (ec != std::errc()) fail("bad call count in 'calls='");
      (void)end;
      if (callee_.empty()) fail("'calls=' without a 'cfn=' before it");
      out_.calls[callee_] += count;
      after_calls_ = true;
    } else if (key == "jump" || key == "jcnd") {
      // Jump counts (--collect-jumps): not time.
    } else {
      fail("unknown line '" + std::string(key) + "='");
    }
  }

  // `key: value`: the events counted and the positions of a cost line; the rest
  // (version, creator, pid, cmd, part, thread, desc, summary, totals) is not needed.
  void header_line(std::string_view key, std::string_view value) {
    if (key == "events") {
      saw_events_ = true;
      const std::size_t space = value.find(' ');
      out_.unit = std::string(value.substr(0, space));
      if (out_.unit.empty()) fail("'events:' names no event");
    } else if (key == "positions") {
      positions_ = 0;
      line_column_ = 0;
      for (std::size_t i = 0; i < value.size();) {
        while (i < value.size() && value[i] == ' ') ++i;
        std::size_t b = i;
        while (i < value.size() && value[i] != ' ') ++i;
        if (i > b) {
          if (value.substr(b, i - b) == "line") line_column_ = positions_;
          ++positions_;
        }
      }
      if (positions_ == 0) fail("'positions:' names no position");
    }
  }

  std::string_view text_;
  std::string label_;
  std::size_t line_number_ = 0;
  CallStacks out_;
  bool saw_events_ = false;
  std::size_t positions_ = 1;
  std::size_t line_column_ = 0;
  std::vector<std::uint64_t> last_;
  std::map<std::string, std::string> objects_, files_, functions_;
  std::string object_, file_, function_, callee_;
  bool after_calls_ = false;
};

}  // namespace

CallStacks parse_callgrind(std::string_view text, const std::string& label) {
  CallStacks stacks = Parser(text, label).run();
  return stacks;
}

CallStacks read_callgrind(const std::filesystem::path& path) {
  return parse_callgrind(read_text(path), path.string());
}

}  // namespace maxcode
