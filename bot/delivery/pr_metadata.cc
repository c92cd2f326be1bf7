#include "bot/delivery/pr_metadata.h"

#include <sstream>

#include "runner/util/files.h"
#include "runner/util/json_io.h"

namespace maxcode::bot {

namespace {
constexpr std::string_view kOpen = "<!-- maxcode: ";
constexpr std::string_view kClose = " -->";
}  // namespace

std::string render_metadata(const nlohmann::json& metadata) {
  std::string json;
  for (char c : dump_json(metadata)) {
    // Outside strings JSON has no '<' or '>', so escaping them everywhere is safe.
    if (c == '<') json += "\\u003c";
    else if (c == '>') json += "\\u003e";
    else json += c;
  }
  return std::string(kOpen) + json + std::string(kClose);
}

std::optional<nlohmann::json> parse_metadata(const std::string& body) {
  const std::size_t open = body.rfind(kOpen);
  if (open == std::string::npos) return std::nullopt;
  const std::size_t start = open + kOpen.size();
  const std::size_t close = body.find(kClose, start);
  if (close == std::string::npos) return std::nullopt;
  auto j = nlohmann::json::parse(body.substr(start, close - start), nullptr, false);
  if (!j.is_object()) return std::nullopt;
  return j;
}

std::string code_hash(const std::string& code) {
  std::string normalized;
  std::istringstream in(code);
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.pop_back();
    normalized += line + "\n";
  }
  return sha256_hex(normalized);
}

std::string lines_of(const std::string& text, std::size_t line_begin, std::size_t line_end) {
  if (line_begin == 0 || line_end < line_begin) return "";
  std::istringstream in(text);
  std::string out;
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (n >= line_begin && n <= line_end) out += line + "\n";
    if (n > line_end) break;
  }
  return n >= line_begin ? out : "";
}

}  // namespace maxcode::bot
