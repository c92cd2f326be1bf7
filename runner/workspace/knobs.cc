#include "runner/workspace/knobs.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "runner/util/files.h"

namespace maxcode {

namespace {

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      lines.emplace_back(text.substr(start));
      break;
    }
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i) out += '\n';
    out += lines[i];
  }
  return out;
}

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool is_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_word_head(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
// What std::regex's `.` does not match.
bool is_line_break(char c) { return c == '\n' || c == '\r'; }

std::size_t skip_space(std::string_view text, std::size_t at) {
  while (at < text.size() && is_space(text[at])) ++at;
  return at;
}

// The end of the identifier at text[at], or npos when none starts there.
std::size_t identifier_end(std::string_view text, std::size_t at) {
  if (at >= text.size() || !is_word_head(text[at])) return std::string_view::npos;
  while (at < text.size() && is_word(text[at])) ++at;
  return at;
}

// The end of the shortest value `\S.*?` at line[value_start] whose rest `rest_ok`
// accepts, as std::regex's lazy match finds it; nullopt when no end works.
// rest_ok(q, breaks_after) sees q, the first non-space of the rest.
template <class RestOk>
std::optional<std::size_t> shortest_value_end(std::string_view line, std::size_t value_start, RestOk rest_ok) {
  if (value_start >= line.size() || is_space(line[value_start])) return std::nullopt;
  // The first non-space at or after each position, from the end: each try is O(1).
  std::vector<std::size_t> next_non_space(line.size() + 1, line.size());
  for (std::size_t i = line.size(); i-- > value_start;)
    next_non_space[i] = is_space(line[i]) ? next_non_space[i + 1] : i;
  const std::size_t last_break = [&] {
    for (std::size_t i = line.size(); i-- > 0;)
      if (is_line_break(line[i])) return i;
    return std::string_view::npos;
  }();
  // Whether line[from, end) holds a line break, which a trailing `.*` cannot take.
  auto breaks_after = [&](std::size_t from) { return last_break != std::string_view::npos && last_break >= from; };
  for (std::size_t end = value_start + 1; end <= line.size(); ++end) {
    if (is_line_break(line[end - 1])) return std::nullopt;  // nor can the value's `.*?`
    if (rest_ok(next_non_space[end], breaks_after)) return end;
  }
  return std::nullopt;
}

// The declaration cut at its name [name_start, name_end) and value [value_start, value_end).
KnobDeclaration declaration(std::string_view line, std::size_t name_start, std::size_t name_end,
                            std::size_t value_start, std::size_t value_end) {
  return {std::string(line.substr(name_start, name_end - name_start)), std::string(line.substr(0, value_start)),
          std::string(line.substr(value_start, value_end - value_start)), std::string(line.substr(value_end))};
}

// `^(\s*#\s*define\s+([A-Za-z_]\w*)\s+)(\S.*?)(\s*(?://.*|/\*.*)?)$`
std::optional<KnobDeclaration> parse_define(std::string_view line) {
  std::size_t at = skip_space(line, 0);
  if (at == line.size() || line[at] != '#') return std::nullopt;
  at = skip_space(line, at + 1);
  if (line.compare(at, 6, "define") != 0) return std::nullopt;
  at += 6;
  const std::size_t name_start = skip_space(line, at);
  if (name_start == at) return std::nullopt;
  const std::size_t name_end = identifier_end(line, name_start);
  if (name_end == std::string_view::npos) return std::nullopt;
  const std::size_t value_start = skip_space(line, name_end);
  if (value_start == name_end) return std::nullopt;
  auto rest_ok = [&](std::size_t q, auto breaks_after) {
    if (q == line.size()) return true;
    return (line.compare(q, 2, "//") == 0 || line.compare(q, 2, "/*") == 0) && !breaks_after(q + 2);
  };
  const auto value_end = shortest_value_end(line, value_start, rest_ok);
  if (!value_end) return std::nullopt;
  return declaration(line, name_start, name_end, value_start, *value_end);
}

// `^(\s*(?:(?:static|inline|extern|__host__|__device__|__constant__)\s+)*`
// `constexpr\s+[^=;]*?\b([A-Za-z_]\w*)\s*=\s*)(\S.*?)(\s*;.*)$`
std::optional<KnobDeclaration> parse_constexpr(std::string_view line) {
  std::size_t at = skip_space(line, 0);
  while (true) {
    bool qualifier = false;
    for (std::string_view word : {"static", "inline", "extern", "__host__", "__device__", "__constant__"}) {
      if (line.compare(at, word.size(), word) == 0 && at + word.size() < line.size() &&
          is_space(line[at + word.size()])) {
        at = skip_space(line, at + word.size());
        qualifier = true;
        break;
      }
    }
    if (!qualifier) break;
  }
  if (line.compare(at, 9, "constexpr") != 0) return std::nullopt;
  at += 9;
  if (at == line.size() || !is_space(line[at])) return std::nullopt;
  const std::size_t type_start = at + 1;  // `\s+` takes one at least; the rest may be the type's
  // `[^=;]*?` cannot pass the first '=' or ';', and the name and `\s*` hold neither:
  // the '=' must come first, and the name is the word just before it.
  const std::size_t equals = line.find_first_of("=;", type_start);
  if (equals == std::string_view::npos || line[equals] != '=') return std::nullopt;
  std::size_t name_end = equals;
  while (name_end > type_start && is_space(line[name_end - 1])) --name_end;
  std::size_t name_start = name_end;
  while (name_start > type_start && is_word(line[name_start - 1])) --name_start;
  // `\b` before the name: the word starts there, not inside a longer one.
  if (name_start == name_end || is_word(line[name_start - 1]) || !is_word_head(line[name_start]))
    return std::nullopt;
  const std::size_t value_start = skip_space(line, equals + 1);
  auto rest_ok = [&](std::size_t q, auto breaks_after) {
    return q < line.size() && line[q] == ';' && !breaks_after(q + 1);
  };
  const auto value_end = shortest_value_end(line, value_start, rest_ok);
  if (!value_end) return std::nullopt;
  return declaration(line, name_start, name_end, value_start, *value_end);
}

// `//\s*maxcode:\s*tune\s+([A-Za-z_]\w*)((?:\s+[^\s]+)+)\s*$`, searched: the knob's name
// and its values, from the first `//` of the line where it matches.
std::optional<std::pair<std::string, std::vector<std::string>>> tune_comment(std::string_view line) {
  for (std::size_t slashes = line.find("//"); slashes != std::string_view::npos;
       slashes = line.find("//", slashes + 1)) {
    std::size_t at = skip_space(line, slashes + 2);
    if (line.compare(at, 8, "maxcode:") != 0) continue;
    at = skip_space(line, at + 8);
    if (line.compare(at, 4, "tune") != 0) continue;
    at += 4;
    const std::size_t name_start = skip_space(line, at);
    if (name_start == at) continue;
    const std::size_t name_end = identifier_end(line, name_start);
    if (name_end == std::string_view::npos || name_end == line.size() || !is_space(line[name_end])) continue;
    std::vector<std::string> values;
    for (std::size_t v = skip_space(line, name_end); v < line.size(); v = skip_space(line, v)) {
      std::size_t e = v;
      while (e < line.size() && !is_space(line[e])) ++e;
      values.emplace_back(line.substr(v, e - v));
      v = e;
    }
    if (values.empty()) continue;
    return std::make_pair(std::string(line.substr(name_start, name_end - name_start)), std::move(values));
  }
  return std::nullopt;
}

}  // namespace

// The knob lines are scanned by hand, not with std::regex: it recurses once per
// character, and a long enough line (a 60,000-character #define) overflows the stack.
// Each scan below spells out the pattern it keeps.
std::optional<KnobDeclaration> parse_knob_line(std::string_view line) {
  if (line.find("define") == std::string_view::npos && line.find("constexpr") == std::string_view::npos)
    return std::nullopt;  // most lines are neither
  if (auto d = parse_define(line)) return d;
  return parse_constexpr(line);
}

std::string knob_value_in_line(std::string_view line, std::string_view name) {
  auto declaration = parse_knob_line(line);
  return declaration && declaration->name == name ? declaration->value : "";
}

std::vector<Knob> find_declared_knobs(std::string_view text, std::string_view file) {
  std::vector<Knob> knobs;
  const auto lines = split_lines(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    auto comment = tune_comment(lines[i]);
    if (!comment) continue;
    Knob knob;
    knob.name = comment->first;
    knob.file = file;
    knob.values = std::move(comment->second);
    // The declaration is on the comment's own line, or the next one (comment above).
    for (std::size_t j : {i, i + 1}) {
      if (j >= lines.size()) continue;
      std::string value = knob_value_in_line(lines[j], knob.name);
      if (!value.empty()) {
        knob.line = j + 1;
        knob.original_value = value;
        break;
      }
    }
    if (knob.line == 0)
      throw KnobError(std::string(file) + ":" + std::to_string(i + 1) + ": 'maxcode: tune " +
                      knob.name + "' stands next to no #define or constexpr named " + knob.name);
    knobs.push_back(std::move(knob));
  }
  return knobs;
}

Knob locate_knob(std::string_view text, std::string_view file, const KnobConfig& config) {
  const auto lines = split_lines(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string value = knob_value_in_line(lines[i], config.name);
    if (value.empty()) continue;
    return Knob{config.name, std::string(file), i + 1, value, config.values};
  }
  throw KnobError(std::string(file) + ": knob '" + config.name +
                  "' has no '#define " + config.name + " <value>' or 'constexpr ... " +
                  config.name + " = <value>;' line");
}

std::string apply_knobs(std::string_view text, std::string_view file, const std::vector<Knob>& knobs,
                        const std::map<std::string, std::string>& values) {
  auto lines = split_lines(text);
  for (const Knob& knob : knobs) {
    if (knob.file != file) continue;
    auto it = values.find(knob.name);
    if (it == values.end()) continue;
    std::string& line = lines.at(knob.line - 1);
    auto declaration = parse_knob_line(line);
    if (!declaration || declaration->name != knob.name)
      throw KnobError(knob.file + ":" + std::to_string(knob.line) + ": knob line changed");
    line = declaration->before + it->second + declaration->after;
  }
  return join_lines(lines);
}

namespace {

// `// maxcode: tune ` anywhere in `text`, by hand rather than std::regex, whose recursion
// overflows the stack on long lines.
bool declares_knob(std::string_view text) {
  auto blank = [](char c) { return c == ' ' || c == '\t'; };
  for (std::size_t at = text.find("maxcode:"); at != std::string_view::npos; at = text.find("maxcode:", at + 1)) {
    std::size_t before = at;
    while (before > 0 && blank(text[before - 1])) --before;
    if (before < 2 || text.substr(before - 2, 2) != "//") continue;
    std::size_t after = at + 8;
    while (after < text.size() && blank(text[after])) ++after;
    if (text.substr(after, 4) == "tune" && after + 4 < text.size() && std::isspace(static_cast<unsigned char>(text[after + 4])))
      return true;
  }
  return false;
}

}  // namespace

bool repository_declares_knobs(const std::filesystem::path& repo) {
  namespace fs = std::filesystem;
  std::error_code ec;
  int files = 0;
  for (fs::recursive_directory_iterator it(repo, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    const fs::path& path = it->path();
    const std::string name = path.filename().string();
    if (it->is_directory(ec)) {
      if (name.starts_with(".") || name.starts_with("build")) it.disable_recursion_pending();
      continue;
    }
    static const std::vector<std::string> sources = {".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".cu", ".cuh"};
    if (!it->is_regular_file(ec) || it->is_symlink(ec)) continue;
    if (std::find(sources.begin(), sources.end(), path.extension().string()) == sources.end()) continue;
    if (++files > 20000) return true;
    if (it->file_size(ec) > (4u << 20)) continue;
    const std::string text = read_text(path);
    if (declares_knob(text)) return true;
  }
  return false;
}

}  // namespace maxcode
