#include "runner/workspace/knobs.h"

#include <regex>
#include <sstream>

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

}  // namespace

std::optional<KnobDeclaration> parse_knob_line(std::string_view line) {
  static const std::regex define_pattern(
      R"(^(\s*#\s*define\s+([A-Za-z_]\w*)\s+)(\S.*?)(\s*(?://.*|/\*.*)?)$)");
  static const std::regex constexpr_pattern(
      R"(^(\s*(?:(?:static|inline|extern|__host__|__device__|__constant__)\s+)*)"
      R"(constexpr\s+[^=;]*?\b([A-Za-z_]\w*)\s*=\s*)(\S.*?)(\s*;.*)$)");
  if (line.find("define") == std::string_view::npos && line.find("constexpr") == std::string_view::npos)
    return std::nullopt;  // the regexes are slow; most lines are neither
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_match(line.begin(), line.end(), m, define_pattern) &&
      !std::regex_match(line.begin(), line.end(), m, constexpr_pattern))
    return std::nullopt;
  return KnobDeclaration{m.str(2), m.str(1), m.str(3), m.str(4)};
}

std::string knob_value_in_line(std::string_view line, std::string_view name) {
  auto declaration = parse_knob_line(line);
  return declaration && declaration->name == name ? declaration->value : "";
}

std::vector<Knob> find_declared_knobs(std::string_view text, std::string_view file) {
  static const std::regex tune_comment(R"(//\s*maxcode:\s*tune\s+([A-Za-z_]\w*)((?:\s+[^\s]+)+)\s*$)");
  std::vector<Knob> knobs;
  const auto lines = split_lines(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (!std::regex_search(lines[i], m, tune_comment)) continue;
    Knob knob;
    knob.name = m[1];
    knob.file = file;
    std::istringstream values(m[2]);
    for (std::string v; values >> v;) knob.values.push_back(v);
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

}  // namespace maxcode
