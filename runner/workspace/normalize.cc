#include "runner/workspace/normalize.h"

#include <cctype>

#include "runner/workspace/source_extent.h"

namespace maxcode {

namespace {

bool is_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// One more token: a space only between two word characters ("unsigned int").
void append(std::string& out, std::string_view token) {
  if (!out.empty() && !token.empty() && is_word(out.back()) && is_word(token.front())) out += ' ';
  out += token;
}

}  // namespace

// The scanner's tokens (runner/workspace/source_extent.h), so that comments, literals and
// preprocessor lines are told apart by the same rules everywhere. A preprocessor line
// is normalized the same way inside, on a line of its own.
std::string normalize_code(std::string_view code) {
  std::string out;
  for (const CodeToken& t : code_tokens(code, Directives::kKeep)) {
    const std::string_view text = code.substr(t.begin, t.end - t.begin);
    if (!t.directive) {
      append(out, text);
      continue;
    }
    if (!out.empty() && out.back() != '\n') out += '\n';
    out += '#';
    const std::string_view body = text.substr(1);
    for (const CodeToken& d : code_tokens(body)) append(out, body.substr(d.begin, d.end - d.begin));
    out += '\n';
  }
  return out;
}

}  // namespace maxcode
