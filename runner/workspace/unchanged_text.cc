#include "runner/workspace/unchanged_text.h"

#include <algorithm>
#include <set>
#include <vector>

#include "runner/util/text.h"
#include "runner/workspace/normalize.h"
#include "runner/workspace/source_extent.h"

namespace maxcode {

namespace {

struct Piece {
  std::size_t begin = 0, end = 0;
  bool directive = false;  // a preprocessor line (with its continuations)
};

bool is_word(std::string_view text, const CodeToken& t, std::string_view word) {
  return t.word && text.substr(t.begin, t.end - t.begin) == word;
}

// Preprocessor lines, each with its backslash continuations.
std::vector<Piece> directives(std::string_view text) {
  std::vector<Piece> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = trim(text.substr(pos, end - pos));
    if (!line.empty() && line.front() == '#') {
      while (end < text.size() && end > pos && text[end - 1] == '\\') {
        const std::size_t next = text.find('\n', end + 1);
        end = next == std::string_view::npos ? text.size() : next;
      }
      out.push_back({pos, end, true});
    }
    pos = end + 1;
  }
  return out;
}

// The top-level declarations and definitions of `text`, by its tokens: a piece ends at a
// `;` outside braces, or at the `}` that closes a function body or a namespace block.
// After the `}` of a type or an initializer (`struct S {...} s;`, `int a[] = {...};`)
// the piece goes on to its `;`.
std::vector<Piece> declarations(std::string_view text) {
  std::vector<Piece> out;
  const std::vector<CodeToken> tokens = code_tokens(text);
  int depth = 0;
  bool open = false, to_semicolon = false;
  Piece piece;
  for (const CodeToken& t : tokens) {
    const char c = t.word || t.end - t.begin != 1 ? 0 : text[t.begin];
    if (!open) {
      piece = {t.begin, t.end, false};
      open = true;
      to_semicolon = false;
    }
    piece.end = t.end;
    if (depth == 0 && (is_word(text, t, "struct") || is_word(text, t, "class") || is_word(text, t, "union") ||
                       is_word(text, t, "enum") || is_word(text, t, "typedef") || c == '='))
      to_semicolon = true;
    if (c == '{') {
      ++depth;
    } else if (c == '}') {
      if (--depth <= 0) {
        depth = 0;
        if (!to_semicolon) {
          out.push_back(piece);
          open = false;
        }
      }
    } else if (c == ';' && depth == 0) {
      out.push_back(piece);
      open = false;
    }
  }
  if (open) out.push_back(piece);
  return out;
}

std::string directive_text(std::string_view text, const Piece& p) {
  return normalize_code(text.substr(p.begin, p.end - p.begin));
}

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

// The code's declarations the file has already (normalised), or that are a `main` the
// model wrote to try its code in a file without one; never one that defines a function
// of the unit (`keep`).
std::vector<Piece> known_declarations(std::string_view file, std::string_view code,
                                      const std::vector<Piece>& code_declarations,
                                      const std::vector<std::string>& keep) {
  std::set<std::string> known;
  for (const Piece& p : declarations(file)) known.insert(normalize_code(file.substr(p.begin, p.end - p.begin)));
  bool file_has_main = false;
  for (const Definition& d : list_definitions(file)) file_has_main = file_has_main || (!d.in_class && d.qualified == "main");
  std::vector<Piece> drop;
  for (const Piece& p : code_declarations) {
    const std::string_view text = code.substr(p.begin, p.end - p.begin);
    bool harness = false;  // a `main` the model wrote to try its code, in a file without one
    bool kept = false;     // defines a function of the unit
    for (const Definition& d : list_definitions(text)) {
      if (d.in_class) continue;
      harness = harness || (!file_has_main && d.qualified == "main");
      kept = kept || std::find(keep.begin(), keep.end(), d.base_name) != keep.end();
    }
    if (!kept && (harness || known.count(normalize_code(text)))) drop.push_back(p);
  }
  return drop;
}

// The code's preprocessor lines the file has (includes, defines, #pragma once), and its
// include guard when the file has the same one. Only lines between declarations: a
// #define or #pragma inside a function body belongs to that body.
std::vector<Piece> known_directives(std::string_view file, std::string_view code,
                                    const std::vector<Piece>& code_declarations) {
  const std::vector<Piece> file_directives = directives(file);
  std::set<std::string> known_lines;
  for (const Piece& p : file_directives) known_lines.insert(directive_text(file, p));
  std::vector<Piece> code_directives;
  for (const Piece& d : directives(code)) {
    bool inside = false;
    for (const Piece& p : code_declarations) inside = inside || (d.begin > p.begin && d.begin < p.end);
    if (!inside) code_directives.push_back(d);
  }
  std::vector<Piece> drop;
  for (const Piece& p : code_directives) {
    const std::string line = directive_text(code, p);
    const bool plain = starts_with(line, "#include") || starts_with(line, "#pragma once") ||
                       starts_with(line, "#define") || starts_with(line, "# include");
    if (plain && known_lines.count(line)) drop.push_back(p);
  }
  // The include guard around the whole code, when the file has the same one: its
  // #ifndef first and its #endif last (the #define went with the lines above).
  if (code_directives.size() >= 2 && file_directives.size() >= 2) {
    const std::string first = directive_text(code, code_directives.front());
    const std::string last = directive_text(code, code_directives.back());
    if (starts_with(first, "#ifndef") && first == directive_text(file, file_directives.front()) &&
        starts_with(last, "#endif") && starts_with(directive_text(file, file_directives.back()), "#endif")) {
      drop.push_back(code_directives.front());
      drop.push_back(code_directives.back());
    }
  }
  return drop;
}

// `kept` with the comment paragraphs the file has word for word (a licence header, a
// neighbour's documentation) left out, and blank lines collapsed.
std::string without_known_comments(std::string_view file, const std::string& kept) {
  std::string out;
  std::string paragraph;
  auto flush = [&] {
    const std::string_view body = trim(paragraph, "\n");  // indentation stays
    const std::string_view words = trim(body);
    const bool comment_only = !words.empty() && normalize_code(words).empty();
    if (!words.empty() && !(comment_only && file.find(words) != std::string_view::npos))
      out += (out.empty() ? "" : "\n\n") + std::string(body);
    paragraph.clear();
  };
  std::size_t pos = 0;
  while (pos <= kept.size()) {
    std::size_t end = kept.find('\n', pos);
    if (end == std::string::npos) end = kept.size();
    const std::string_view line(kept.data() + pos, end - pos);
    if (trim(line).empty()) flush();
    else paragraph += std::string(line) + "\n";
    pos = end + 1;
  }
  flush();
  return out + "\n";
}

}  // namespace

std::string drop_unchanged(std::string_view file, std::string_view code, const std::vector<std::string>& keep) {
  const std::vector<Piece> code_declarations = declarations(code);
  std::vector<Piece> drop = known_declarations(file, code, code_declarations, keep);
  for (const Piece& p : known_directives(file, code, code_declarations)) drop.push_back(p);
  if (drop.empty()) return std::string(code);

  std::vector<bool> gone(code.size() + 1, false);
  for (const Piece& p : drop)
    for (std::size_t i = p.begin; i < p.end && i < code.size(); ++i) gone[i] = true;
  std::string kept;
  for (std::size_t i = 0; i < code.size(); ++i)
    if (!gone[i]) kept += code[i];
  return without_known_comments(file, kept);
}

}  // namespace maxcode
