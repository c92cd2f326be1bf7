#include "runner/workspace/normalize.h"

#include <cctype>

namespace maxcode {

namespace {

bool is_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

std::string normalize_code(std::string_view code) {
  std::string out;
  bool pending_space = false;  // whitespace seen since the last token
  bool in_directive = false;   // inside a preprocessor line
  auto emit = [&](char c) {
    // A space survives only between two word characters ("unsigned int").
    if (pending_space && !out.empty() && is_word(out.back()) && is_word(c)) out += ' ';
    pending_space = false;
    out += c;
  };
  for (std::size_t i = 0; i < code.size(); ++i) {
    const char c = code[i];
    if (c == '/' && i + 1 < code.size() && code[i + 1] == '/') {
      while (i + 1 < code.size() && code[i + 1] != '\n') ++i;
      continue;
    }
    if (c == '/' && i + 1 < code.size() && code[i + 1] == '*') {
      const std::size_t end = code.find("*/", i + 2);
      i = end == std::string_view::npos ? code.size() : end + 1;
      pending_space = true;
      continue;
    }
    if (c == '"' || c == '\'') {  // literal: copied as is, escapes included
      emit(c);
      for (++i; i < code.size() && code[i] != c; ++i) {
        out += code[i];
        if (code[i] == '\\' && i + 1 < code.size()) out += code[++i];
      }
      if (i < code.size()) out += c;
      continue;
    }
    if (c == '\n') {
      if (in_directive && !(out.size() && out.back() == '\\')) {
        out += '\n';
        in_directive = false;
        pending_space = false;
      } else {
        pending_space = true;
      }
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      pending_space = true;
      continue;
    }
    if (c == '#' && (out.empty() || out.back() == '\n')) in_directive = true;
    if (c == '#' && !in_directive && pending_space) {  // '#' first on a later line
      const std::size_t line_start = code.rfind('\n', i);
      bool first = true;
      for (std::size_t k = line_start == std::string_view::npos ? 0 : line_start + 1; k < i; ++k)
        first = first && std::isspace(static_cast<unsigned char>(code[k]));
      if (first) {
        out += '\n';
        pending_space = false;
        in_directive = true;
      }
    }
    emit(c);
  }
  return out;
}

}  // namespace maxcode
