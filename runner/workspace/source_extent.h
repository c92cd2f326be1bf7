// Finding a function's definition in C, C++ and CUDA source text, with exact extents.
//
// A token-level scanner rather than a compiler front end: it must work on a file
// without its build flags or headers (a .cu file without the CUDA headers at hand,
// code behind macros), and it only needs to know where definitions start and end.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace maxcode {

struct Extent {
  // [begin, end) byte offsets of the whole definition: from the first token of its
  // declaration (template header, attributes, __global__, storage class, macros
  // standing before it) through the closing brace. Leading comments are not part of it.
  std::size_t begin = 0;
  std::size_t end = 0;
  std::size_t line_begin = 0;  // 1-based line of `begin`
  std::size_t line_end = 0;    // 1-based line of the closing brace
  std::size_t body_begin = 0;  // offset of the opening brace of the body
  std::string name;       // the name as written, qualified where it was (ns::Cls::fn)
  std::string qualified;  // enclosing namespaces and classes, then `name` (a::Cls::fn)
  std::string signature;  // declaration text before the body, whitespace-collapsed
};

class SourceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Every definition (with a body) whose name matches `name`. `name` may be qualified
// ("ns::fn", "Cls::fn"); it matches a definition whose fully qualified name (enclosing
// namespaces and classes included) ends with it at a `::` boundary. Declarations
// without a body, calls and mentions in comments or strings never match.
std::vector<Extent> find_definitions(std::string_view text, std::string_view name);

// Every definition (with a body) in the text, in order.
std::vector<Extent> all_definitions(std::string_view text);

// A token of code as the scanner sees it: comments and preprocessor lines make no
// tokens, a literal is one token, `::` `->` `...` are one token, other punctuation one
// character each (`<<<` is three `<`).
struct CodeToken {
  std::size_t begin = 0;  // byte offsets in the text
  std::size_t end = 0;
  bool word = false;      // an identifier or keyword
};
std::vector<CodeToken> code_tokens(std::string_view text);

// Exactly one definition. Throws SourceError when there is none ("no definition of
// 'fn' in src/a.cpp") or several and `signature` does not pick one (the message lists
// each candidate's signature and line). `signature` matches when, whitespace collapsed,
// it is a substring of the definition's signature.
Extent find_definition(std::string_view text, std::string_view name,
                       std::string_view file_label,
                       std::optional<std::string_view> signature = std::nullopt);

}  // namespace maxcode
