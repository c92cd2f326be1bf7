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

#include "runner/util/error.h"

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

class SourceError : public Error {
 public:
  using Error::Error;
};

// Every definition (with a body) whose name matches `name`. `name` may be qualified
// ("ns::fn", "Cls::fn"); it matches a definition whose fully qualified name (enclosing
// namespaces and classes included) ends with it at a `::` boundary. Declarations
// without a body, calls and mentions in comments or strings never match.
std::vector<Extent> find_definitions(std::string_view text, std::string_view name);

// A token of code as the scanner sees it: comments make no tokens, a literal is one
// token, `::` `->` `...` are one token, other punctuation one character each (`<<<` is
// three `<`). A preprocessor line (continuations and comments in it included) is one
// token with kKeep, and none with kSkip.
struct CodeToken {
  std::size_t begin = 0;  // byte offsets in the text
  std::size_t end = 0;
  bool word = false;       // an identifier or keyword
  bool directive = false;  // a whole preprocessor line
};
enum class Directives { kSkip, kKeep };
std::vector<CodeToken> code_tokens(std::string_view text, Directives directives = Directives::kSkip);

// `text` with every comment's characters turned to spaces (its line breaks kept), so
// offsets and lines stay; "//" inside a string literal is not a comment. Preprocessor
// lines are kept whole.
std::string blank_comments(std::string_view text);

// Exactly one definition. Throws SourceError when there is none ("no definition of
// 'fn' in src/a.cpp") or several and `signature` does not pick one (the message lists
// each candidate's signature and line). `signature` matches when, whitespace collapsed,
// it is a substring of the definition's signature.
Extent find_definition(std::string_view text, std::string_view name,
                       std::string_view file_label,
                       std::optional<std::string_view> signature = std::nullopt);

// Every definition (with a body) in `text`, in file order.
struct Definition {
  Extent extent;
  std::string qualified;  // enclosing namespaces and classes, then the name (ns::Cls::fn)
  std::string base_name;  // the last part of it (fn), template arguments dropped
  bool in_class = false;  // defined inside a class body, not at namespace scope
};
std::vector<Definition> list_definitions(std::string_view text);

// One mention of a name inside a definition, as the call graph of a target's unit sees
// it. Members reached through `.` or `->` and the qualifiers of qualified names are not
// mentions; the name of `ns::fn(x)` is `fn`.
struct NameUse {
  enum class Kind {
    kCall,                // fn(x), fn<T>(x)
    kLaunch,              // kernel<<<grid, block>>>(x), kernel<T><<<...>>>(x)
    kValue,               // named where a value stands (&fn, an argument): its address taken
    kPointerCall,         // (*fp)(x), table[i](x): a call through a pointer
    kPointerDeclaration,  // void (*fp)(int), a parameter int (*cb)(int): fp(x) later calls through it
  };
  Kind kind;
  std::string name;
  std::size_t offset = 0;  // of the name in the text
  std::size_t line = 0;    // 1-based
};
// The mentions inside `extent` (a definition found in `text`), in text order.
std::vector<NameUse> name_uses(std::string_view text, const Extent& extent);

// Whitespace collapsed the way signatures are compared ("f( int a )" == "f(int a)").
std::string canonical_text(std::string_view text);

}  // namespace maxcode
