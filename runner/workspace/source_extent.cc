#include "runner/workspace/source_extent.h"

#include "runner/workspace/cpp_tokens.h"

#include <algorithm>
#include <unordered_set>

namespace maxcode {
namespace {

using namespace cpp;  // the token scanner (cpp_tokens.h)

// ---------------------------------------------------------------------------------------
// Names.

// Whitespace removed except where it separates two word characters, so that "fn( int a )"
// and "fn(int a)" compare equal.
std::string canonical(std::string_view s) {
  std::string out;
  bool gap = false;
  for (char c : s) {
    if (is_space(c)) {
      gap = true;
      continue;
    }
    if (gap && !out.empty() && is_word_char(out.back()) && is_word_char(c)) out += ' ';
    out += c;
    gap = false;
  }
  return out;
}

// Splits a canonical qualified name at `::` outside template arguments and drops the
// template arguments of each part (Box<T>::put -> Box, put), except in operator names.
std::vector<std::string> name_components(std::string_view name) {
  std::vector<std::string> parts;
  std::string part;
  int depth = 0;
  auto flush = [&] {
    if (!part.empty()) parts.push_back(part);
    part.clear();
  };
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool in_operator = part.rfind("operator", 0) == 0;
    if (!in_operator && c == '<') {
      ++depth;
    } else if (!in_operator && c == '>' && depth > 0) {
      --depth;
    } else if (depth == 0 && c == ':' && i + 1 < name.size() && name[i + 1] == ':') {
      flush();
      ++i;
    } else if (depth == 0) {
      part += c;
    }
  }
  flush();
  return parts;
}

bool ends_with_components(const std::vector<std::string>& full,
                          const std::vector<std::string>& query) {
  if (query.empty() || query.size() > full.size()) return false;
  return std::equal(query.rbegin(), query.rend(), full.rbegin());
}

// Words that can stand before a `(` without naming a function being defined.
bool is_non_name_word(std::string_view w) {
  static const std::unordered_set<std::string_view> words = {"alignas",
                                                             "alignof",
                                                             "__attribute__",
                                                             "__declspec",
                                                             "decltype",
                                                             "noexcept",
                                                             "throw",
                                                             "sizeof",
                                                             "static_assert",
                                                             "__launch_bounds__",
                                                             "__cluster_dims__",
                                                             "__maxnreg__",
                                                             "requires",
                                                             "if",
                                                             "while",
                                                             "for",
                                                             "switch",
                                                             "return",
                                                             "catch",
                                                             "try",
                                                             "typeid",
                                                             "explicit",
                                                             "void",
                                                             "int",
                                                             "char",
                                                             "bool",
                                                             "short",
                                                             "long",
                                                             "float",
                                                             "double",
                                                             "unsigned",
                                                             "signed",
                                                             "auto",
                                                             "const",
                                                             "volatile",
                                                             "template",
                                                             "typename",
                                                             "class",
                                                             "struct",
                                                             "union",
                                                             "enum",
                                                             "new",
                                                             "delete",
                                                             "asm",
                                                             "__asm__",
                                                             "_Pragma",
                                                             "__pragma",
                                                             "co_await",
                                                             "co_yield",
                                                             "co_return",
                                                             "namespace",
                                                             "using",
                                                             "operator",
                                                             "_Alignas"};
  return words.count(w) > 0;
}

// An identifier that reads as a macro (ABSL_MUST_USE_RESULT) or a compiler extension
// (__forceinline__, __THROW); these may follow a parameter list.
bool is_macro_like(std::string_view w) {
  if (w.rfind("__", 0) == 0) return true;
  bool has_letter = false;
  for (char c : w) {
    if (c >= 'a' && c <= 'z') return false;
    if (c >= 'A' && c <= 'Z') has_letter = true;
  }
  return has_letter;
}

bool is_access_specifier(std::string_view w) {
  return w == "public" || w == "private" || w == "protected";
}

// ---------------------------------------------------------------------------------------
// Scanning.

// An enclosing namespace or class. Members of an inline namespace are also named
// without it (std::literals::chrono_literals).
struct ScopePart {
  std::string name;
  bool is_inline = false;
  bool is_class = false;  // a class, struct or union rather than a namespace
};
using ScopePath = std::vector<ScopePart>;

struct Found {
  std::size_t start;       // first token of the declaration
  std::size_t name_begin;  // first token of the declarator name
  std::size_t params;      // `(` of the parameter list
  std::size_t body;        // `{` of the body
  std::size_t close;       // `}` of the body
  ScopePath scope;
};

// The declarations and name uses of a source file, from its tokens.
class Scanner : public TokenView {
 public:
  explicit Scanner(std::string_view text) : TokenView(text) {}
  bool is_name_word(std::size_t k) const { return is_word(k) && !is_non_name_word(str(k)); }

  std::vector<Found> scan() {
    std::vector<Found> found;
    scan_scope(0, tokens_.size(), {}, found);
    return found;
  }

  // How the names in text[begin, end) are used; `body` is the offset of the function's
  // body, before which `(*name)` declares a parameter.
  std::vector<NameUse> uses(std::size_t begin, std::size_t end, std::size_t body) const {
    std::vector<NameUse> out;
    auto first = std::lower_bound(tokens_.begin(), tokens_.end(), begin,
                                  [](const Token& t, std::size_t at) { return t.begin < at; });
    for (std::size_t k = static_cast<std::size_t>(first - tokens_.begin());
         k < tokens_.size() && tokens_[k].begin < end; ++k) {
      if (!is_name_word(k)) continue;
      if (k > 0 && (is(k - 1, ".") || is(k - 1, "->"))) continue;  // a member of an object
      if (is(k + 1, "::")) continue;                               // a qualifier
      if (auto kind = use_kind(k, body)) out.push_back({*kind, std::string(str(k)), tokens_[k].begin, 0});
    }
    return out;
  }

 private:
  std::optional<NameUse::Kind> use_kind(std::size_t k, std::size_t body) const {
    using K = NameUse::Kind;
    // `(*name)(`: declares a function pointer (after a type, or among the parameters),
    // or calls through one.
    if (k >= 2 && is(k - 1, "*") && is(k - 2, "(") && is(k + 1, ")") && is(k + 2, "(")) {
      const bool declares =
          tokens_[k].begin < body || (k >= 3 && ((is_word(k - 3) && !is(k - 3, "return")) || is(k - 3, ">")));
      return declares ? K::kPointerDeclaration : K::kPointerCall;
    }
    if (is_launch(k + 1)) return K::kLaunch;
    if (is(k + 1, "(")) return K::kCall;
    if (is(k + 1, "[")) {  // table[i](x): a call through an element of an array
      const std::size_t after = after_group(k + 1);
      if (after != kNone && is(after, "(")) return K::kPointerCall;
      return std::nullopt;
    }
    std::size_t next = k + 1;
    if (is(k + 1, "<")) {  // fn<T>(x), kernel<T><<<...>>>(x), &fn<T>
      const std::size_t close = angle_close(k + 1);
      if (close == kNone) return std::nullopt;
      if (is_launch(close + 1)) return K::kLaunch;
      if (is(close + 1, "(")) return K::kCall;
      next = close + 1;
    }
    // Named without a call where a value stands (an argument, an initializer, after `&`
    // or a cast): its address is taken, and it may be called through it.
    const bool value_before = k > 0 && (is(k - 1, "&") || is(k - 1, "(") || is(k - 1, ",") || is(k - 1, "=") ||
                                        is(k - 1, "return") || is(k - 1, ")"));
    const bool value_after = is(next, ")") || is(next, ",") || is(next, ";");
    if (value_before && value_after) return K::kValue;
    return std::nullopt;
  }

  void scan_scope(std::size_t from, std::size_t to, const ScopePath& scope,
                  std::vector<Found>& found) {
    std::size_t k = from;
    while (k < to) {
      if (is(k, "(") || is(k, "[")) {
        k = std::min(to, after_group(k));
      } else if (is(k, "{")) {
        k = std::min(to, handle_brace(from, k, scope, found));
      } else {
        ++k;
      }
    }
  }

  // A `{` at namespace or class scope: a function body, a scope to descend into, or
  // anything else (initializer, enum) to step over. Returns where scanning resumes.
  std::size_t handle_brace(std::size_t from, std::size_t brace, const ScopePath& scope,
                           std::vector<Found>& found) {
    const std::size_t start = declaration_start(from, brace);
    const std::size_t end = after_group(brace);
    // Namespaces first: `namespace std _GLIBCXX_VISIBILITY(default) {` is no function.
    auto names = namespace_names(start, brace);
    if (!names && !is_linkage_block(start, brace)) {
      if (auto fn = match_function(start, brace)) {
        fn->scope = scope;
        found.push_back(*fn);
        return fn->close + 1;
      }
      names = class_names(start, brace);
      if (!names) return end == kNone ? brace + 1 : end;
      for (ScopePart& part : *names) part.is_class = true;
    }
    if (end == kNone) return brace + 1;  // unclosed (#if branches): look past it
    ScopePath inner = scope;
    if (names) inner.insert(inner.end(), names->begin(), names->end());
    scan_scope(brace + 1, end - 1, inner, found);
    return end;
  }

  // Walks back from the `{` to the end of whatever came before the declaration.
  std::size_t declaration_start(std::size_t from, std::size_t brace) const {
    std::size_t j = brace;
    while (j > from) {
      if (j != brace && tokens_[j].after_break) break;
      const std::size_t p = j - 1;
      if (is(p, ";") || is(p, "{") || is(p, "}")) break;
      if (is(p, ":") && p > from && is_access_specifier(str(p - 1))) break;
      if (is(p, ")") || is(p, "]")) {
        if (match_[p] == kNone || match_[p] < from) break;
        j = match_[p];
        continue;
      }
      j = p;
    }
    return j;
  }

  // The first `(` in the declaration that follows a declarator name and is followed by
  // what may stand between a parameter list and a body. The first, because later ones
  // may belong to a constructor's initializer list; candidates that fail (a macro's
  // arguments, a default template argument) are skipped.
  std::optional<Found> match_function(std::size_t start, std::size_t brace) const {
    for (std::size_t k = start; k < brace; ++k) {
      if (is(k, "template") && is(k + 1, "<")) {
        k = angle_close(k + 1);
        if (k == kNone) return std::nullopt;
      } else if (is(k, "(") || is(k, "[")) {
        const std::size_t name = is(k, "(") ? declarator_name(k) : kNone;
        const std::size_t next = after_group(k);
        if (next == kNone) return std::nullopt;
        if (name != kNone) {
          const std::size_t body = body_after_parameters(next);
          if (body != kNone && match_[body] != kNone)
            return Found{start, name, k, body, match_[body], {}};
        }
        k = next - 1;
      }
    }
    return std::nullopt;
  }

  // First token of the (possibly qualified) name before the `(` at `k`, or kNone.
  std::size_t declarator_name(std::size_t k) const {
    if (k == 0) return kNone;
    std::size_t begin = operator_name(k);
    if (begin == kNone) {
      const std::size_t p = k - 1;
      if (is_name_word(p)) {
        begin = p > 0 && is(p - 1, "~") ? p - 1 : p;
      } else if (is(p, ">")) {
        const std::size_t lt = angle_open(p);  // fn<int>(...): an explicit specialization
        if (lt == kNone || lt == 0 || !is_name_word(lt - 1)) return kNone;
        begin = lt - 1;
      } else {
        return kNone;
      }
    }
    return qualifier_start(begin);
  }

  // `operator<<`, `operator()`, `operator bool`, `operator new[]`, `operator""_km`: the
  // `operator` token if one stands shortly before `k` with at least one token after it.
  std::size_t operator_name(std::size_t k) const {
    for (std::size_t back = 2; back <= 5 && back <= k; ++back) {
      const std::size_t i = k - back;
      if (is(i, "operator")) return i;
      if (is(i, ";") || is(i, "{") || is(i, "}")) break;
    }
    return kNone;
  }

  // Extends a name starting at `begin` back over `Outer::`, `Box<T>::` qualifiers.
  std::size_t qualifier_start(std::size_t begin) const {
    while (begin >= 2 && is(begin - 1, "::")) {
      const std::size_t q = begin - 2;
      if (is_name_word(q)) {
        begin = q;
      } else if (is(q, ">")) {
        const std::size_t lt = angle_open(q);
        if (lt == kNone || lt == 0 || !is_name_word(lt - 1)) break;
        begin = lt - 1;
      } else {
        break;
      }
    }
    return begin;
  }

  // After a parameter list: qualifiers, noexcept(...), attributes, macros, a trailing
  // return type, a requires clause or a constructor's initializer list, then the body.
  // Returns the body's `{`, or kNone when this is not a definition.
  std::size_t body_after_parameters(std::size_t k) const {
    while (k < tokens_.size()) {
      if (is(k, "{")) return k;
      if (is(k, "->") || is(k, "requires")) return next_top_level_brace(k + 1);
      if (is(k, ":")) return body_after_initializers(k + 1);
      if (is(k, "&")) {  // ref-qualifiers; `&&` is lexed as two
        ++k;
      } else if (is(k, "[")) {
        k = after_group(k);
      } else if (is_word(k) && is_qualifier_word(str(k))) {
        k = is(k + 1, "(") ? after_group(k + 1) : k + 1;
      } else {
        return kNone;
      }
      if (k == kNone) return kNone;
    }
    return kNone;
  }

  static bool is_qualifier_word(std::string_view w) {
    static const std::unordered_set<std::string_view> words = {
        "const", "volatile", "noexcept", "throw", "override", "final", "mutable"};
    return words.count(w) > 0 || is_macro_like(w);
  }

  // The first `{` outside parentheses and brackets, unless a `;` or `}` comes first.
  std::size_t next_top_level_brace(std::size_t k) const {
    while (k < tokens_.size()) {
      if (is(k, "{")) return k;
      if (is(k, ";") || is(k, "}")) return kNone;
      k = is(k, "(") || is(k, "[") ? after_group(k) : k + 1;
      if (k == kNone) return kNone;
    }
    return kNone;
  }

  // `: a_{1}, Base<T>(2), b_(x)... {` — returns the body's `{`.
  std::size_t body_after_initializers(std::size_t k) const {
    while (k < tokens_.size()) {
      const std::size_t name = k;
      while (k < tokens_.size()) {
        if (is(k, "decltype") && is(k + 1, "(")) {
          k = after_group(k + 1);
        } else if (is_word(k) || is(k, "::")) {
          ++k;
        } else if (is(k, "<")) {
          k = angle_close(k);
          if (k != kNone) ++k;
        } else {
          break;
        }
        if (k == kNone) return kNone;
      }
      if (k == name || !(is(k, "(") || is(k, "{"))) return kNone;
      k = after_group(k);
      if (k == kNone) return kNone;
      if (is(k, "...")) ++k;
      if (is(k, "{")) return k;
      if (!is(k, ",")) return kNone;
      ++k;
    }
    return kNone;
  }

  // Tokens [start, brace) skipping template headers and bracketed groups, so that the
  // `class` of `template <class T>` or the parentheses of alignas(16) are not looked at.
  template <typename Visit>
  void visit_top_level(std::size_t start, std::size_t brace, Visit visit) const {
    for (std::size_t k = start; k < brace; ++k) {
      if (is(k, "template") && is(k + 1, "<")) {
        k = angle_close(k + 1);
        if (k == kNone) return;
      } else if (is(k, "(") || is(k, "[")) {
        if (match_[k] == kNone) return;
        k = match_[k];
      } else if (!visit(k)) {
        return;
      }
    }
  }

  // `namespace a::b {`, `inline namespace v1 {`, `namespace a::inline b {`, `namespace {`
  // (no name).
  std::optional<ScopePath> namespace_names(std::size_t start, std::size_t brace) const {
    std::optional<ScopePath> names;
    bool is_inline = false;
    bool expect_name = false;  // just after `namespace` or `::`; other words are macros
    visit_top_level(start, brace, [&](std::size_t k) {
      if (is(k, "inline")) {
        is_inline = true;
      } else if (is(k, "namespace")) {
        names.emplace();
        expect_name = true;
      } else if (names && is(k, "::")) {
        expect_name = true;
      } else if (names && expect_name && is_word(k)) {
        names->push_back({std::string(str(k)), is_inline});
        is_inline = expect_name = false;
      } else {
        is_inline = expect_name = false;
      }
      return true;
    });
    return names;
  }

  // `struct alignas(16) MY_API Outer::Inner final : Base {`: the last name before the
  // base clause. `enum class` is not a scope that can hold functions.
  std::optional<ScopePath> class_names(std::size_t start, std::size_t brace) const {
    std::optional<ScopePath> names;
    bool is_enum = false;
    visit_top_level(start, brace, [&](std::size_t k) {
      if (is(k, "enum")) {
        is_enum = true;
        return false;
      }
      if (!names) {
        if (is(k, "class") || is(k, "struct") || is(k, "union")) names.emplace();
        return true;
      }
      if (is(k, ":") || is(k, "=")) return false;
      if (is(k, "<")) {
        const std::size_t close = angle_close(k);
        if (close == kNone) return false;
        k = close;  // template arguments of a specialization; not part of the name
      } else if (is_word(k) && !is(k, "final") && !is_non_name_word(str(k))) {
        if (!(k > 0 && is(k - 1, "::"))) names->clear();
        names->push_back({std::string(str(k)), false});
      }
      return true;
    });
    if (is_enum) return std::nullopt;
    return names;
  }

  bool is_linkage_block(std::size_t start, std::size_t brace) const {
    return brace == start + 2 && is(start, "extern") && tokens_[start + 1].kind == Kind::kLiteral;
  }
};

std::size_t line_of(std::string_view text, std::size_t offset) {
  return 1 + static_cast<std::size_t>(std::count(
                 text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

Extent to_extent(std::string_view text, const Scanner& scanner, const Found& f) {
  const auto& tokens = scanner.tokens();
  Extent e;
  e.begin = tokens[f.start].begin;
  e.end = tokens[f.close].end;
  e.body_begin = tokens[f.body].begin;
  e.line_begin = line_of(text, e.begin);
  e.line_end = line_of(text, tokens[f.close].begin);
  e.name = canonical(scanner.joined(f.name_begin, f.params));
  e.signature = scanner.joined(f.start, f.body);
  for (const ScopePart& part : f.scope) e.qualified += part.name + "::";
  e.qualified += e.name;
  return e;
}

std::string describe_candidates(const std::vector<Extent>& extents) {
  std::string out;
  for (const Extent& e : extents)
    out += "\n  line " + std::to_string(e.line_begin) + ": " + e.signature;
  return out;
}

}  // namespace

std::vector<Definition> list_definitions(std::string_view text) {
  Scanner scanner(text);
  std::vector<Definition> out;
  for (const Found& f : scanner.scan()) {
    Definition d;
    d.extent = to_extent(text, scanner, f);
    std::vector<std::string> full;
    for (const ScopePart& part : f.scope) {
      full.push_back(part.name);
      d.in_class = d.in_class || part.is_class;
    }
    for (const std::string& part : name_components(d.extent.name)) full.push_back(part);
    d.base_name = full.empty() ? d.extent.name : full.back();
    for (const std::string& part : full) d.qualified += (d.qualified.empty() ? "" : "::") + part;
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<NameUse> name_uses(std::string_view text, const Extent& extent) {
  Scanner scanner(text);
  std::vector<NameUse> uses = scanner.uses(extent.begin, extent.end, extent.body_begin);
  std::size_t line = 1, counted = 0;
  for (NameUse& use : uses) {
    line += static_cast<std::size_t>(std::count(text.begin() + static_cast<std::ptrdiff_t>(counted),
                                                text.begin() + static_cast<std::ptrdiff_t>(use.offset), '\n'));
    counted = use.offset;
    use.line = line;
  }
  return uses;
}

std::string canonical_text(std::string_view text) { return canonical(text); }

std::vector<Extent> find_definitions(std::string_view text, std::string_view name) {
  const std::vector<std::string> query = name_components(canonical(name));
  Scanner scanner(text);
  std::vector<Extent> out;
  for (const Found& f : scanner.scan()) {
    Extent e = to_extent(text, scanner, f);
    std::vector<std::string> full, visible;
    for (const ScopePart& part : f.scope) {
      full.push_back(part.name);
      if (!part.is_inline) visible.push_back(part.name);
    }
    for (const std::string& part : name_components(e.name)) {
      full.push_back(part);
      visible.push_back(part);
    }
    if (ends_with_components(full, query) || ends_with_components(visible, query))
      out.push_back(std::move(e));
  }
  return out;
}

std::vector<CodeToken> code_tokens(std::string_view text, Directives directives) {
  std::vector<CodeToken> out;
  for (const Token& t : lex(text, directives == Directives::kKeep))
    out.push_back({t.begin, t.end, t.kind == Kind::kWord, t.kind == Kind::kDirective});
  return out;
}

std::string blank_comments(std::string_view text) {
  std::string out(text);
  // Between the scanner's tokens lie only whitespace and comments.
  const auto blank = [&out](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i)
      if (!is_space(out[i])) out[i] = ' ';
  };
  std::size_t at = 0;
  for (const Token& t : lex(text, /*keep_directives=*/true)) {
    blank(at, t.begin);
    at = t.end;
  }
  blank(at, out.size());
  return out;
}

Extent find_definition(std::string_view text, std::string_view name, std::string_view file_label,
                       std::optional<std::string_view> signature) {
  const std::string what = "'" + std::string(name) + "' in " + std::string(file_label);
  const std::vector<Extent> all = find_definitions(text, name);
  if (all.empty()) throw SourceError("no definition of " + what);
  if (!signature) {
    if (all.size() == 1) return all.front();
    throw SourceError(std::to_string(all.size()) + " definitions of " + what +
                      "; pass a signature to pick one:" + describe_candidates(all));
  }
  const std::string wanted = canonical(*signature);
  std::vector<Extent> picked;
  for (const Extent& e : all) {
    if (canonical(e.signature).find(wanted) != std::string::npos) picked.push_back(e);
  }
  if (picked.size() == 1) return picked.front();
  const std::string quoted = "'" + std::string(*signature) + "'";
  if (picked.empty())
    throw SourceError("no definition of " + what + " matches signature " + quoted +
                      "; definitions:" + describe_candidates(all));
  throw SourceError(std::to_string(picked.size()) + " definitions of " + what +
                    " match signature " + quoted +
                    "; pass a longer signature:" + describe_candidates(picked));
}

}  // namespace maxcode
