#include "bot/delivery/sanitize.h"

#include <algorithm>
#include <cctype>

namespace maxcode::bot {

namespace {

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; }
bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

std::size_t run_length(std::string_view s, std::size_t at, char c) {
  std::size_t n = 0;
  while (at + n < s.size() && s[at + n] == c) ++n;
  return n;
}

std::size_t longest_run(std::string_view s, char c) {
  std::size_t best = 0;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = run_length(s, i, c);
    best = std::max(best, n);
    i += n ? n : 1;
  }
  return best;
}

// Invisible characters that change what a reader sees (bidirectional overrides and
// isolates, U+202A-U+202E and U+2066-U+2069): dropped, as are C0 controls but tab.
std::size_t invisible_length(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  if (i + 2 < s.size() && b(0) == 0xE2 && b(1) == 0x80 && b(2) >= 0xAA && b(2) <= 0xAE) return 3;
  if (i + 2 < s.size() && b(0) == 0xE2 && b(1) == 0x81 && b(2) >= 0xA6 && b(2) <= 0xA9) return 3;
  if (b(0) < 0x20 && s[i] != '\t' && s[i] != '\n') return 1;
  return 0;
}

// One line outside fenced code. `markdown`: the line is rendered as Markdown (escape
// HTML, keep code spans, disarm images); otherwise it is plain text such as a PR title.
std::string sanitize_line(std::string_view line, bool markdown = true) {
  std::string out;
  out.reserve(line.size() + 16);
  for (std::size_t i = 0; i < line.size();) {
    const char c = line[i];
    if (const std::size_t skip = invisible_length(line, i)) {
      i += skip;
      continue;
    }
    if (c == '`' && markdown) {
      // A code span runs to the next backtick run of the same length; GitHub renders
      // nothing inside it, so it is copied as it is. Without a closing run the
      // backticks are literal text.
      const std::size_t n = run_length(line, i, '`');
      std::size_t close = i + n;
      for (; close < line.size(); ++close)
        if (line[close] == '`') {
          const std::size_t m = run_length(line, close, '`');
          if (m == n) break;
          close += m - 1;
        }
      const std::size_t end = close < line.size() ? close + n : i + n;
      out.append(line.substr(i, end - i));
      i = end;
      continue;
    }
    if (c == '\\' && i + 1 < line.size() && line[i + 1] == '`') {
      out.append(line.substr(i, 2));  // an escaped backtick opens no span
      i += 2;
      continue;
    }
    const char next = i + 1 < line.size() ? line[i + 1] : '\0';
    const char prev = i > 0 ? line[i - 1] : '\0';
    if (c == '@' && word_char(next)) {
      out += '@';
      out += kZeroWidthJoiner;
    } else if (c == '#' && digit(next)) {
      out += '#';
      out += kZeroWidthJoiner;
    } else if ((c == 'G' || c == 'g') && i + 3 < line.size() && (line[i + 1] == 'H' || line[i + 1] == 'h') &&
               line[i + 2] == '-' && digit(line[i + 3]) && !word_char(prev)) {
      out.append(line.substr(i, 3));
      out += kZeroWidthJoiner;
      i += 3;
      continue;
    } else if (c == '<' && markdown) {
      out += "&lt;";
    } else if (c == '!' && next == '[' && markdown) {
      out += "\\!";  // an image becomes a link: no remote content loads with the page
    } else {
      out += c;
    }
    ++i;
  }
  return out;
}

// "```" or "~~~" (three or more) after at most three spaces: the fence, else empty.
std::string_view fence_of(std::string_view line) {
  std::size_t indent = 0;
  while (indent < line.size() && indent < 3 && line[indent] == ' ') ++indent;
  if (indent >= line.size() || (line[indent] != '`' && line[indent] != '~')) return {};
  const std::size_t n = run_length(line, indent, line[indent]);
  return n >= 3 ? line.substr(indent, n) : std::string_view{};
}

}  // namespace

std::string sanitize_markdown(std::string_view text) {
  std::string out;
  std::string open_fence;  // the fence of the code block we are in, if any
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    const bool has_newline = end != std::string_view::npos;
    if (!has_newline) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string_view fence = fence_of(line);
    // What follows the fence on its line: an info string when opening, blanks when closing.
    const std::string_view rest =
        fence.empty() ? std::string_view{} : line.substr(fence.data() - line.data() + fence.size());
    if (open_fence.empty()) {
      // A backtick fence's info string may not hold a backtick (then it is inline code).
      if (!fence.empty() && !(fence[0] == '`' && rest.find('`') != std::string_view::npos)) {
        open_fence = std::string(fence);
        out.append(line);  // the info string is not rendered
      } else {
        out += sanitize_line(line);
      }
    } else {
      out.append(line);
      const bool only_space = std::all_of(rest.begin(), rest.end(), [](char c) { return c == ' ' || c == '\t'; });
      if (!fence.empty() && fence[0] == open_fence[0] && fence.size() >= open_fence.size() && only_space)
        open_fence.clear();
    }
    if (has_newline) out += '\n';
    start = end + 1;
  }
  if (!open_fence.empty()) {
    if (!out.empty() && out.back() != '\n') out += '\n';
    out += open_fence + "\n";
  }
  return out;
}

std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t n = max_bytes;
  // Back off continuation bytes (10xxxxxx) so a character is never split.
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return text.substr(0, n);
}

std::string sanitize_inline(std::string_view text, std::size_t limit) {
  std::string flat(text);
  for (char& c : flat)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  const std::string safe = sanitize_markdown(flat);
  std::string out;
  for (char c : safe) {
    if (c == '\n') continue;  // a closing fence added for an unclosed one: not inline
    if (c == '|') out += '\\';
    out += c;
  }
  if (out.size() <= limit) return out;
  std::string cut(utf8_prefix(out, limit));
  while (!cut.empty() && cut.back() == '\\') cut.pop_back();  // never end on half an escape
  return cut + "…";
}

std::string sanitize_plain(std::string_view text, std::size_t limit) {
  std::string flat(text);
  for (char& c : flat)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  const std::string out = sanitize_line(flat, /*markdown=*/false);
  if (out.size() <= limit) return out;
  return std::string(utf8_prefix(out, limit)) + "…";
}

std::string code_block(std::string_view text, std::string_view language) {
  const std::string fence(std::max<std::size_t>(3, longest_run(text, '`') + 1), '`');
  std::string out = fence + std::string(language) + "\n" + std::string(text);
  if (!text.empty() && text.back() != '\n') out += '\n';
  return out + fence + "\n";
}

std::string code_span(std::string_view text) {
  std::string flat(text);
  for (char& c : flat)
    if (c == '\n' || c == '\r') c = ' ';
  const std::string ticks(longest_run(flat, '`') + 1, '`');
  const bool pad = !flat.empty() && (flat.front() == '`' || flat.back() == '`');
  return ticks + (pad ? " " : "") + flat + (pad ? " " : "") + ticks;
}

}  // namespace maxcode::bot
