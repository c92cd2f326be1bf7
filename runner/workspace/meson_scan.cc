#include "runner/workspace/meson_scan.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

#include "runner/util/files.h"
#include "runner/util/text.h"

namespace maxcode {

namespace fs = std::filesystem;

namespace {

// One function call of a meson.build, at any depth of blocks (if/foreach) but not inside
// another call: `var = name(positional, ..., key: value)`.
struct MesonCall {
  std::string assigned;  // the variable it is assigned to, if any
  std::string function;
  std::vector<std::string> positional;  // each argument's text, trimmed
  std::map<std::string, std::string> keywords;
  std::vector<std::string> conditions;  // of the if/elif branches around it, innermost last ("" for else)
};

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Past the string literal that starts at `at` ('...' or '''...''').
std::size_t skip_string(const std::string& text, std::size_t at) {
  if (text.compare(at, 3, "'''") == 0) {
    const std::size_t end = text.find("'''", at + 3);
    return end == std::string::npos ? text.size() : end + 3;
  }
  for (std::size_t i = at + 1; i < text.size(); ++i) {
    if (text[i] == '\\')
      ++i;
    else if (text[i] == '\'' || text[i] == '\n')
      return i + 1;
  }
  return text.size();
}

// The text without comments ('#' outside a string, to the end of the line).
std::string strip_comments(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '\'') {
      const std::size_t end = skip_string(text, i);
      out.append(text, i, end - i);
      i = end;
    } else if (text[i] == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else {
      out += text[i++];
    }
  }
  return out;
}

// The arguments between the parentheses that open at `open`, split at top-level commas;
// `end` is set past the closing one.
std::vector<std::string> split_arguments(const std::string& text, std::size_t open, std::size_t& end) {
  std::vector<std::string> args;
  std::string current;
  int depth = 0;
  std::size_t i = open + 1;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\'') {
      const std::size_t close = skip_string(text, i);
      current.append(text, i, close - i);
      i = close - 1;
      continue;
    }
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') {
      if (depth == 0) break;
      --depth;
    }
    if (c == ',' && depth == 0) {
      args.emplace_back(trim(current));
      current.clear();
      continue;
    }
    current += c;
  }
  if (!std::string(trim(current)).empty()) args.emplace_back(trim(current));
  end = i + 1;
  return args;
}

std::vector<MesonCall> meson_calls(const std::string& source) {
  const std::string text = strip_comments(source);
  std::vector<MesonCall> calls;
  std::string pending;              // `var =` seen, waiting for its call
  std::vector<std::string> blocks;  // conditions of the open if/foreach blocks
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '\'') {
      i = skip_string(text, i);
      continue;
    }
    if (c == '\n') pending.clear();
    if (!ident_start(c) || (i > 0 && (ident_char(text[i - 1]) || text[i - 1] == '.'))) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && ident_char(text[end])) ++end;
    const std::string word = text.substr(i, end - i);
    if (word == "if" || word == "elif" || word == "else" || word == "foreach" || word == "endif" ||
        word == "endforeach") {
      const std::size_t line_end = std::min(text.find('\n', end), text.size());
      const std::string condition(trim(text.substr(end, line_end - end)));
      if (word == "if")
        blocks.push_back(condition);
      else if (word == "foreach")
        blocks.push_back("");
      else if (!blocks.empty() && (word == "endif" || word == "endforeach"))
        blocks.pop_back();
      else if (!blocks.empty())
        blocks.back() = word == "elif" ? condition : "";
      i = line_end;
      continue;
    }
    std::size_t next = end;
    while (next < text.size() && (text[next] == ' ' || text[next] == '\t')) ++next;
    if (next < text.size() && text[next] == '=' && text.compare(next, 2, "==") != 0) {
      pending = word;
      i = next + 1;
    } else if (next < text.size() && text[next] == '(') {
      MesonCall call{pending, word, {}, {}, blocks};
      pending.clear();
      for (std::string& arg : split_arguments(text, next, i)) {
        std::size_t k = 0;
        while (k < arg.size() && ident_char(arg[k])) ++k;
        std::size_t colon = k;
        while (colon < arg.size() && arg[colon] == ' ') ++colon;
        if (k > 0 && ident_start(arg[0]) && colon < arg.size() && arg[colon] == ':')
          call.keywords[arg.substr(0, k)] = std::string(trim(arg.substr(colon + 1)));
        else
          call.positional.push_back(std::move(arg));
      }
      calls.push_back(std::move(call));
    } else {
      i = end;
    }
  }
  return calls;
}

// 'text' -> text; anything else -> nullopt.
std::optional<std::string> literal(const std::string& arg) {
  if (arg.size() < 2 || arg.front() != '\'' || arg.back() != '\'' || arg.compare(0, 3, "'''") == 0) return std::nullopt;
  const std::string inner = arg.substr(1, arg.size() - 2);
  if (inner.find('\'') != std::string::npos) return std::nullopt;
  return inner;
}

class MesonReader {
 public:
  explicit MesonReader(const fs::path& root) : root_(root) {}

  MesonBuild read() {
    read_options();
    read_dir("", {}, 0);
    MesonBuild out = std::move(out_);
    return out;
  }

 private:
  // The strings an argument stands for: a literal, an array or files() of literals, or a
  // variable assigned one of those in the same folder's files.
  std::vector<std::string> strings_of(const std::string& arg, bool& understood, int depth = 0) {
    if (auto s = literal(arg)) return {*s};
    if (depth > 8) {  // arrays in arrays: a real build nests one or two
      understood = false;
      return {};
    }
    std::string inner;
    if (arg.size() >= 2 && arg.front() == '[' && arg.back() == ']')
      inner = arg.substr(1, arg.size() - 2);
    else if (arg.rfind("files(", 0) == 0 && arg.back() == ')')
      inner = arg.substr(6, arg.size() - 7);
    else if (auto var = lists_.find(arg); var != lists_.end())
      return var->second;
    else {
      understood = false;
      return {};
    }
    std::vector<std::string> out;
    std::size_t end = 0;
    for (const std::string& item : split_arguments("(" + inner + ")", 0, end)) {
      std::vector<std::string> part = strings_of(item, understood, depth + 1);
      out.insert(out.end(), part.begin(), part.end());
    }
    return out;
  }

  // The project's options that are off by default, and the flag that turns each on:
  // `option('benchmarks', type: 'boolean', value: false)` -> "-Dbenchmarks=true",
  // `type: 'feature', value: 'disabled'` -> "-Dname=enabled".
  void read_options() {
    for (const char* name : {"meson.options", "meson_options.txt"}) {
      const std::optional<std::string> text = try_read_text(root_ / name);
      if (!text) continue;
      for (const MesonCall& call : meson_calls(*text)) {
        if (call.function != "option" || call.positional.empty()) continue;
        const std::optional<std::string> option = literal(call.positional[0]);
        const auto type = call.keywords.find("type");
        const auto value = call.keywords.find("value");
        if (!option || type == call.keywords.end() || value == call.keywords.end()) continue;
        if (type->second == "'boolean'" && value->second == "false") off_[*option] = "-D" + *option + "=true";
        if (type->second == "'feature'" && value->second == "'disabled'") off_[*option] = "-D" + *option + "=enabled";
      }
      return;
    }
  }

  // The flags that turn on the options an executable is built behind: get_option('X') in
  // the conditions of the if/elif branches around it (not a negated one).
  std::vector<std::string> options_on(const MesonCall& call) const {
    std::vector<std::string> flags;
    for (const std::string& condition : call.conditions) {
      if (condition.rfind("not ", 0) == 0) continue;
      for (std::size_t at = condition.find("get_option('"); at != std::string::npos;
           at = condition.find("get_option('", at + 1)) {
        const std::size_t start = at + 12, end = condition.find('\'', start);
        if (end == std::string::npos) break;
        const auto off = off_.find(condition.substr(start, end - start));
        if (off != off_.end() && std::find(flags.begin(), flags.end(), off->second) == flags.end())
          flags.push_back(off->second);
      }
    }
    return flags;
  }

  // The repository is untrusted: a subdir() that leaves it, or enters a folder again (a
  // cycle through '.'), is not followed.
  // `outer`: the conditions around the subdir() call that entered `dir`.
  void read_dir(const std::string& dir, const std::vector<std::string>& outer, int depth) {
    fs::path relative = fs::path(dir).lexically_normal();
    if (relative == ".") relative.clear();
    if (depth > 32 || relative.is_absolute() || (!relative.empty() && *relative.begin() == "..") ||
        !visited_.insert(relative.generic_string()).second)
      return;
    const fs::path file = root_ / dir / "meson.build";
    const std::optional<std::string> text = try_read_text(file);
    if (!text) return;
    const std::string shown = (dir.empty() ? "" : dir + "/") + "meson.build";
    // `srcs = ['a.c', 'b.c']`: arrays assigned outside any call, before the calls use them.
    for (auto& [var, items] : arrays_of(*text)) lists_[var] = std::move(items);
    for (MesonCall& call : meson_calls(*text)) {
      call.conditions.insert(call.conditions.begin(), outer.begin(), outer.end());
      if (call.function == "subdir" && !call.positional.empty()) {
        if (auto sub = literal(call.positional[0]))
          read_dir(dir.empty() ? *sub : dir + "/" + *sub, call.conditions, depth + 1);
      } else if (call.function == "executable") {
        executable(call, dir, shown);
      } else if ((call.function == "test" || call.function == "benchmark") && call.positional.size() >= 2) {
        const auto named = executables_.find(call.positional[1]);
        if (named == executables_.end()) continue;
        (call.function == "test" ? out_.tested : out_.benchmarked).insert(named->second);
      } else if (!call.assigned.empty() && (call.function == "files")) {
        bool understood = true;
        std::vector<std::string> items;
        for (const std::string& arg : call.positional) {
          std::vector<std::string> part = strings_of(arg, understood);
          items.insert(items.end(), part.begin(), part.end());
        }
        if (understood) lists_[call.assigned] = items;
      }
    }
  }

  // Assignments of an array of literals, `name = [...]`, anywhere in the file.
  std::map<std::string, std::vector<std::string>> arrays_of(const std::string& source) {
    std::map<std::string, std::vector<std::string>> out;
    const std::string text = strip_comments(source);
    for (std::size_t at = text.find('['); at != std::string::npos; at = text.find('[', at + 1)) {
      std::size_t eq = at;
      while (eq > 0 && (text[eq - 1] == ' ' || text[eq - 1] == '\t')) --eq;
      if (eq == 0 || text[eq - 1] != '=' || (eq >= 2 && std::string("=!<>+").find(text[eq - 2]) != std::string::npos))
        continue;
      std::size_t name_end = eq - 1;
      while (name_end > 0 && (text[name_end - 1] == ' ' || text[name_end - 1] == '\t')) --name_end;
      std::size_t name_start = name_end;
      while (name_start > 0 && ident_char(text[name_start - 1])) --name_start;
      if (name_start == name_end) continue;
      std::size_t close = text.find(']', at);
      if (close == std::string::npos) break;
      bool understood = true;
      std::vector<std::string> items = strings_of(text.substr(at, close - at + 1), understood);
      if (understood) out[text.substr(name_start, name_end - name_start)] = items;
    }
    return out;
  }

  void executable(const MesonCall& call, const std::string& dir, const std::string& shown) {
    const std::optional<std::string> name = call.positional.empty() ? std::nullopt : literal(call.positional[0]);
    if (!name) {
      out_.notes.push_back(shown + ": an executable() whose name is not a string literal was left out");
      return;
    }
    MesonExecutable e{*name, dir, {}, options_on(call)};
    bool understood = true;
    for (std::size_t i = 1; i < call.positional.size(); ++i)
      for (const std::string& source : strings_of(call.positional[i], understood))
        e.sources.push_back((fs::path(dir) / source).lexically_normal().generic_string());
    if (!understood) out_.notes.push_back(shown + ": some sources of executable('" + *name + "') are not literals");
    if (!call.assigned.empty()) executables_[call.assigned] = *name;
    out_.executables.push_back(std::move(e));
  }

  fs::path root_;
  MesonBuild out_;
  std::map<std::string, std::string> off_;                 // option -> the flag that turns it on
  std::set<std::string> visited_;                          // folders read, normalized
  std::map<std::string, std::string> executables_;         // variable -> executable name
  std::map<std::string, std::vector<std::string>> lists_;  // variable -> the strings it holds
};

}  // namespace

MesonBuild read_meson_build(const fs::path& root) { return MesonReader(root).read(); }

}  // namespace maxcode
