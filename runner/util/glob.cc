// Globs are matched component by component: splitting on '/' first keeps `*`, `?` and
// classes inside one component for free, and leaves `**` as the only thing that spans
// components.
#include "runner/util/glob.h"

#include <cstddef>

namespace maxcode {
namespace {

std::vector<std::string_view> split(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) {
      parts.push_back(path.substr(start));
      return parts;
    }
    parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
}

// Matches `c` against the class that starts at pattern[i] == '['. Returns the index just
// past the closing ']', or npos when the class is unterminated (then '[' is literal).
std::size_t match_class(std::string_view pattern, std::size_t i, char c, bool& matched) {
  std::size_t j = i + 1;
  bool negate = j < pattern.size() && (pattern[j] == '!' || pattern[j] == '^');
  if (negate) ++j;
  bool found = false;
  bool first = true;
  // A ']' right after '[' (or '[!') is a member, as in shell globs.
  for (; j < pattern.size() && (first || pattern[j] != ']'); ++j, first = false) {
    char low = pattern[j];
    char high = low;
    if (j + 2 < pattern.size() && pattern[j + 1] == '-' && pattern[j + 2] != ']') {
      high = pattern[j + 2];
      j += 2;
    }
    if (low <= c && c <= high) found = true;
  }
  if (j >= pattern.size()) return std::string_view::npos;
  matched = found != negate;
  return j + 1;
}

// One component against one component pattern: `*` any run, `?` one character,
// `[...]` a class, `\x` a literal x. Backtracks to the last `*` only, which is enough
// because a later `*` can absorb whatever an earlier one would have.
bool match_component(std::string_view pattern, std::string_view text) {
  std::size_t p = 0, t = 0;
  std::size_t star = std::string_view::npos, star_text = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = ++p;
      star_text = t;
      continue;
    }
    if (p < pattern.size()) {
      std::size_t next = std::string_view::npos;
      bool matched = false;
      if (pattern[p] == '?') {
        next = p + 1, matched = true;
      } else if (pattern[p] == '[') {
        next = match_class(pattern, p, text[t], matched);
      }
      if (next == std::string_view::npos) {  // a literal character
        bool escaped = pattern[p] == '\\' && p + 1 < pattern.size();
        std::size_t at = escaped ? p + 1 : p;
        next = at + 1, matched = pattern[at] == text[t];
      }
      if (matched) {
        p = next, ++t;
        continue;
      }
    }
    if (star == std::string_view::npos) return false;
    p = star;
    t = ++star_text;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view path) {
  std::vector<std::string_view> pat = split(pattern);
  std::vector<std::string_view> parts = split(path);
  // can[i][j]: pattern components i.. match path components j.. (filled from the end).
  std::size_t n = pat.size(), m = parts.size();
  std::vector<std::vector<char>> can(n + 1, std::vector<char>(m + 1, 0));
  can[n][m] = 1;
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t j = m + 1; j-- > 0;) {
      if (pat[i] == "**") {
        // Zero components, or swallow one and stay on `**`.
        can[i][j] = can[i + 1][j] || (j < m && can[i][j + 1]);
      } else {
        can[i][j] = j < m && can[i + 1][j + 1] && match_component(pat[i], parts[j]);
      }
    }
  }
  return can[0][0];
}

bool in_scope(std::string_view path, const std::vector<std::string>& include,
              const std::vector<std::string>& exclude) {
  // Paths from tools often come as "./src/a.cc"; globs are written relative to the root.
  while (path.starts_with("./")) path.remove_prefix(2);
  auto any = [&](const std::vector<std::string>& globs) {
    for (const std::string& glob : globs) {
      if (glob_match(glob, path)) return true;
    }
    return false;
  };
  return any(include) && !any(exclude);
}

}  // namespace maxcode
