#include "runner/workspace/cpp_tokens.h"

#include <algorithm>
#include <iterator>
#include <utility>

namespace maxcode::cpp {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

namespace {

// Comments and preprocessor lines produce no tokens, so nothing in them can be mistaken
// for code; literals become single tokens, so no brace inside one counts.

bool is_word_start(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || u >= 0x80;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool at(std::string_view text, std::size_t i, std::string_view s) { return text.substr(i, s.size()) == s; }

// Whether the newline at `i` is escaped by a backslash (line splicing), CRLF included.
bool is_spliced(std::string_view text, std::size_t i) {
  if (i > 0 && text[i - 1] == '\r') --i;
  return i > 0 && text[i - 1] == '\\';
}

// A `//` comment from `i`; returns the offset of the newline that ends it (a backslash
// before the newline continues the comment, as the preprocessor sees it).
std::size_t skip_line_comment(std::string_view text, std::size_t i) {
  while (i < text.size()) {
    if (text[i] == '\n' && !is_spliced(text, i)) return i;
    ++i;
  }
  return text.size();
}

std::size_t skip_block_comment(std::string_view text, std::size_t i) {
  const std::size_t close = text.find("*/", i + 2);
  return close == std::string_view::npos ? text.size() : close + 2;
}

// A quoted literal whose opening quote is at `i`. An unterminated one stops at the end of
// its line so that one stray quote does not swallow the rest of the file.
std::size_t skip_quoted(std::string_view text, std::size_t i) {
  const char quote = text[i++];
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\\') {
      i = std::min(i + 2, text.size());
      continue;
    }
    if (c == quote) return i + 1;
    if (c == '\n') return i;
    ++i;
  }
  return text.size();
}

// A raw string whose opening quote is at `i`: R"delim( ... )delim".
std::size_t skip_raw_string(std::string_view text, std::size_t i) {
  const std::size_t open = text.find('(', i + 1);
  if (open == std::string_view::npos || open - i > 17) return skip_quoted(text, i);
  const std::string closing = ")" + std::string(text.substr(i + 1, open - i - 1)) + "\"";
  const std::size_t close = text.find(closing, open + 1);
  return close == std::string_view::npos ? text.size() : close + closing.size();
}

// A preprocessor line starting at the `#` at `i`, continuation lines included; returns
// the offset of the newline that ends it.
std::size_t skip_directive(std::string_view text, std::size_t i) {
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\n' && !is_spliced(text, i)) return i;
    if (at(text, i, "//")) {
      return skip_line_comment(text, i);
    } else if (at(text, i, "/*")) {
      i = skip_block_comment(text, i);
    } else if (c == '"' || c == '\'') {
      i = skip_quoted(text, i);
    } else {
      ++i;
    }
  }
  return text.size();
}

std::size_t skip_number(std::string_view text, std::size_t i) {
  ++i;  // a digit or a `.` before one
  while (i < text.size()) {
    const char c = text[i];
    const char prev = text[i - 1];
    if (is_word_char(c) || c == '.') {
      ++i;
    } else if (c == '\'' && i + 1 < text.size() && is_word_char(text[i + 1])) {
      i += 2;  // digit separator, not a character literal
    } else if ((c == '+' || c == '-') && (prev == 'e' || prev == 'E' || prev == 'p' || prev == 'P')) {
      ++i;
    } else {
      break;
    }
  }
  return i;
}

std::size_t skip_word(std::string_view text, std::size_t i) {
  while (i < text.size() && is_word_char(text[i])) ++i;
  return i;
}

// A word that prefixes a string or character literal (u8"x", LR"(x)").
bool is_literal_prefix(std::string_view word) { return word == "L" || word == "u" || word == "U" || word == "u8"; }

bool is_raw_prefix(std::string_view word) {
  return word == "R" || word == "LR" || word == "uR" || word == "UR" || word == "u8R";
}

// Lexes one token starting at `i` (not whitespace, comment or directive); returns its end.
std::pair<Kind, std::size_t> lex_token(std::string_view text, std::size_t i) {
  const char c = text[i];
  const char next = i + 1 < text.size() ? text[i + 1] : '\0';
  if (is_digit(c) || (c == '.' && is_digit(next))) return {Kind::kNumber, skip_number(text, i)};
  if (c == '"' || c == '\'') {
    // A user-defined literal suffix ("abc"_s) belongs to the literal.
    return {Kind::kLiteral, skip_word(text, skip_quoted(text, i))};
  }
  if (is_word_start(c)) {
    const std::size_t end = skip_word(text, i);
    const std::string_view word = text.substr(i, end - i);
    const char after = end < text.size() ? text[end] : '\0';
    if (after == '"' && is_raw_prefix(word)) return {Kind::kLiteral, skip_word(text, skip_raw_string(text, end))};
    if ((after == '"' || after == '\'') && is_literal_prefix(word))
      return {Kind::kLiteral, skip_word(text, skip_quoted(text, end))};
    return {Kind::kWord, end};
  }
  for (std::string_view multi : {"::", "->", "..."}) {
    if (at(text, i, multi)) return {Kind::kPunct, i + multi.size()};
  }
  return {Kind::kPunct, i + 1};
}

}  // namespace

bool is_word_char(char c) { return is_word_start(c) || (c >= '0' && c <= '9'); }

// The tokens of `text`; a preprocessor line is one kDirective token when
// `keep_directives`, else none (it only marks a break).
std::vector<Token> lex(std::string_view text, bool keep_directives) {
  std::vector<Token> tokens;
  bool line_start = true;  // only whitespace and comments so far on this line
  bool line_empty = true;  // only whitespace so far on this line
  bool break_pending = false;
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    const bool splice = c == '\\' && i + 1 < text.size() && text[i + 1] == '\n';
    if (!is_space(c) && !splice) line_empty = false;
    if (c == '\n') {
      if (line_empty) break_pending = true;
      line_start = true;
      line_empty = true;
      ++i;
    } else if (is_space(c) || splice) {
      ++i;
    } else if (at(text, i, "//")) {
      i = skip_line_comment(text, i);
    } else if (at(text, i, "/*")) {
      i = skip_block_comment(text, i);
    } else if (c == '#' && line_start) {
      const std::size_t end = skip_directive(text, i);
      if (keep_directives) tokens.push_back({Kind::kDirective, i, end, break_pending});
      i = end;
      break_pending = true;
    } else {
      const auto [kind, end] = lex_token(text, i);
      tokens.push_back({kind, i, end, break_pending});
      break_pending = false;
      line_start = false;
      i = end;
    }
  }
  return tokens;
}

std::size_t TokenView::angle_close(std::size_t k, std::size_t limit) const {
  int depth = 0;
  for (std::size_t i = k; i < std::min(limit, tokens_.size()); ++i) {
    if (is(i, "(") || is(i, "[")) {
      if (match_[i] == kNone) return kNone;
      i = match_[i];
    } else if (is(i, "<")) {
      ++depth;
    } else if (is(i, ">")) {
      if (--depth == 0) return i;
    } else if (is(i, ";") || is(i, "{") || is(i, "}")) {
      return kNone;
    }
  }
  return kNone;
}

std::size_t TokenView::angle_open(std::size_t k) const {
  int depth = 0;
  for (std::size_t i = k + 1; i-- > 0;) {
    if (is(i, ")") || is(i, "]")) {
      if (match_[i] == kNone) return kNone;
      i = match_[i];
    } else if (is(i, ">")) {
      ++depth;
    } else if (is(i, "<")) {
      if (--depth == 0) return i;
    } else if (is(i, ";") || is(i, "{") || is(i, "}")) {
      return kNone;
    }
  }
  return kNone;
}

void TokenView::match_brackets() {
  match_.assign(tokens_.size(), kNone);
  std::vector<std::size_t> open;
  for (std::size_t k = 0; k < tokens_.size(); ++k) {
    if (tokens_[k].kind != Kind::kPunct) continue;
    const char c = text_[tokens_[k].begin];
    if (c == '(' || c == '[' || c == '{') {
      open.push_back(k);
      continue;
    }
    const char opener = c == ')' ? '(' : c == ']' ? '[' : c == '}' ? '{' : '\0';
    if (opener == '\0') continue;
    auto fits =
        std::find_if(open.rbegin(), open.rend(), [&](std::size_t o) { return text_[tokens_[o].begin] == opener; });
    if (fits == open.rend()) continue;
    match_[*fits] = k;
    match_[k] = *fits;
    open.erase(std::prev(fits.base()), open.end());
  }
}

}  // namespace maxcode::cpp
