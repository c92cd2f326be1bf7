// Writing the call shim (see call_shim.h). Comments are blanked by the source scanner
// (source_extent.h: it knows string literals); the declaration is then read with a small
// scanner of its own: it only has to split a parameter list, and a function it cannot
// read plainly is left unwrapped (with the reason) rather than guessed at.
#include "runner/workspace/call_shim.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

namespace maxcode {
namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string collapse(const std::string& text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

std::vector<std::string> words(const std::string& type) {
  std::vector<std::string> out;
  std::string word;
  for (char c : type + " ") {
    if (ident_char(c) || c == ':') {
      word += c;
      continue;
    }
    if (!word.empty()) out.push_back(word);
    word.clear();
    if (c == '*' || c == '&' || c == '[' || c == '<' || c == '(') out.push_back(std::string(1, c));
  }
  return out;
}

// Arithmetic element types the shim knows how to poison and perturb.
bool arithmetic(const std::string& element, bool& floating) {
  static const std::set<std::string> kFloating = {"float", "double"};
  static const std::set<std::string> kIntegral = {
      "char", "signed char", "unsigned char", "short", "unsigned short", "int", "unsigned",
      "unsigned int", "long", "unsigned long", "long long", "unsigned long long", "size_t",
      "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t", "uint64_t",
      "ptrdiff_t", "signed", "short int", "long int"};
  floating = kFloating.count(element) > 0;
  return floating || kIntegral.count(element) > 0;
}

ShimParam read_param(const std::string& text) {
  ShimParam p;
  std::string decl = text;
  // A default argument is not part of the declaration the wrapper needs.
  int depth = 0;
  for (std::size_t i = 0; i < decl.size(); ++i) {
    const char c = decl[i];
    if (c == '(' || c == '<' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == '>' || c == ']' || c == '}') --depth;
    if (c == '=' && depth == 0) {
      decl = decl.substr(0, i);
      break;
    }
  }
  decl = collapse(decl);
  std::size_t end = decl.size();
  while (end > 0 && decl[end - 1] == ' ') --end;
  std::size_t begin = end;
  while (begin > 0 && ident_char(decl[begin - 1])) --begin;
  p.name = decl.substr(begin, end - begin);
  p.type = collapse(decl.substr(0, begin));
  std::vector<std::string> w = words(p.type);
  static const std::set<std::string> kQualifiers = {"__restrict__", "__restrict", "restrict", "volatile"};
  int stars = 0;
  bool const_element = false, other = false;
  std::string element;
  for (const std::string& word : w) {
    if (word == "*") {
      ++stars;
    } else if (word == "const") {
      if (stars == 0) const_element = true;
    } else if (word == "&" || word == "[" || word == "<" || word == "(") {
      other = true;
    } else if (!kQualifiers.count(word)) {
      if (stars > 0) other = true;
      std::string plain = word.rfind("std::", 0) == 0 ? word.substr(5) : word;
      element += (element.empty() ? "" : " ") + plain;
    }
  }
  bool floating = false;
  if (!p.name.empty() && !other && element == "void" && stars == 1 && const_element) {
    p.kind = ShimParam::Kind::kInput;
    p.element = "unsigned char";
    p.bytes = true;
    return p;
  }
  if (p.name.empty() || p.type.empty() || other || !arithmetic(element, floating) || stars > 1) return p;
  if (stars == 0) {
    if (!floating) p.kind = ShimParam::Kind::kScalar;
    return p;
  }
  p.kind = const_element ? ShimParam::Kind::kInput : ShimParam::Kind::kOutput;
  p.element = element;
  p.floating = floating;
  return p;
}

std::vector<std::string> split_top_level(const std::string& list) {
  std::vector<std::string> out;
  std::string current;
  int depth = 0;
  for (char c : list) {
    if (c == '(' || c == '<' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == '>' || c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(current);
      current.clear();
      continue;
    }
    current += c;
  }
  if (!collapse(current).empty()) out.push_back(current);
  return out;
}

std::string unqualified(const std::string& name) {
  const std::size_t colon = name.rfind("::");
  return colon == std::string::npos ? name : name.substr(colon + 2);
}

// Where the name stands in the declaration text, and the parameter list's parentheses.
struct Declaration {
  std::size_t name_at = std::string::npos;  // offset into the declaration
  std::size_t open = 0, close = 0;
};

Declaration find_declaration(const std::string& decl, const std::string& name) {
  Declaration d;
  for (std::size_t at = decl.find(name); at != std::string::npos; at = decl.find(name, at + 1)) {
    if (at > 0 && ident_char(decl[at - 1])) continue;
    std::size_t after = at + name.size();
    if (after < decl.size() && ident_char(decl[after])) continue;
    while (after < decl.size() && std::isspace(static_cast<unsigned char>(decl[after]))) ++after;
    if (after >= decl.size() || decl[after] != '(') continue;
    int depth = 0;
    for (std::size_t i = after; i < decl.size(); ++i) {
      if (decl[i] == '(') ++depth;
      if (decl[i] == ')' && --depth == 0) {
        d.name_at = at;
        d.open = after;
        d.close = i;
        return d;
      }
    }
  }
  return d;
}

// The element count as C++: each factor of the product converted to size_t.
std::string count_expression(const std::string& size) {
  std::string out;
  std::string factor;
  auto flush = [&] {
    const std::string f = collapse(factor);
    if (f.empty()) return;
    out += (out.empty() ? "" : " * ") + std::string("maxcode_shim_count(") + f + ")";
    factor.clear();
  };
  for (char c : size) {
    if (c == '*') {
      flush();
      continue;
    }
    factor += c;
  }
  flush();
  return out;
}

// The declaration's words before the name, checked: what the shim cannot wrap is named.
// Sets what is returned (void, a number) and gives the reason it cannot, or "".
std::string read_return(const std::string& decl, const Declaration& d, const std::string& name, ShimPlan& plan) {
  const std::vector<std::string> prefix = words(decl.substr(0, d.name_at));
  if (std::find(prefix.begin(), prefix.end(), "template") != prefix.end()) return "'" + name + "' is a template";
  if (std::find(prefix.begin(), prefix.end(), "__global__") != prefix.end())
    return "'" + name + "' is a kernel; the shim wraps host functions";
  const std::string tail = collapse(decl.substr(d.close + 1));
  if (!tail.empty() && tail != "noexcept") return "the declaration of '" + name + "' ends in '" + tail + "'";
  static const std::set<std::string> kSpecifiers = {"static", "inline", "extern", "constexpr", "__host__",
                                                    "[[nodiscard]]", "__forceinline__"};
  std::string returns;
  for (const std::string& word : prefix)
    if (!kSpecifiers.count(word)) returns += (returns.empty() ? "" : " ") + word;
  plan.returns_void = returns == "void";
  if (returns.find('&') != std::string::npos) return "'" + name + "' returns a reference";
  // A number returned is an output too (a sum, a count).
  std::string element;
  for (const std::string& word : words(returns))
    if (word != "const")
      element += (element.empty() ? "" : " ") + (word.rfind("std::", 0) == 0 ? word.substr(5) : word);
  bool floating = false;
  // A bool answered is an output as much as a count is (a validator's verdict); it is
  // recorded as its bytes and compared exactly.
  const bool truth = element == "bool" || element == "_Bool";
  if (!plan.returns_void && (truth || arithmetic(element, floating))) plan.return_element = element;
  return "";
}

// The parameter list, each read; the reason it cannot be, or "".
std::string read_params(const std::string& decl, const Declaration& d, const std::string& name, ShimPlan& plan) {
  std::vector<std::string> list = split_top_level(decl.substr(d.open + 1, d.close - d.open - 1));
  if (list.size() == 1 && collapse(list[0]) == "void") list.clear();
  for (const std::string& text : list) {
    ShimParam p = read_param(text);
    if (p.name.empty()) return "a parameter of '" + name + "' has no name (" + collapse(text) + ")";
    if (collapse(text).find("...") != std::string::npos) return "'" + name + "' takes variable arguments";
    plan.params.push_back(p);
  }
  return "";
}

std::vector<std::string> scalar_names(const ShimPlan& plan) {
  std::vector<std::string> scalars;
  for (const ShimParam& p : plan.params)
    if (p.kind == ShimParam::Kind::kScalar) scalars.push_back(p.name);
  return scalars;
}

// targets.interface's sizes given to the parameters they name; each must be a pointer to
// numbers and each factor of its size a number or an integer parameter. The reason one
// is not, or "".
std::string apply_described(const std::map<std::string, std::string>& described, const std::string& name,
                            ShimPlan& plan) {
  const std::vector<std::string> scalars = scalar_names(plan);
  bool any = false;
  for (ShimParam& p : plan.params) {
    auto it = described.find(p.name);
    if (it == described.end()) continue;
    if (p.kind != ShimParam::Kind::kInput && p.kind != ShimParam::Kind::kOutput)
      return "targets.interface describes '" + p.name + "', which is not a pointer to numbers (" + p.type + ")";
    std::string factor;
    for (char c : it->second + "*") {
      if (c != '*') {
        factor += c;
        continue;
      }
      const std::string f = collapse(factor);
      factor.clear();
      if (f.empty() || std::isdigit(static_cast<unsigned char>(f[0]))) continue;
      if (std::find(scalars.begin(), scalars.end(), f) == scalars.end())
        return "targets.interface: the size of '" + p.name + "' names '" + f +
               "', which is not an integer parameter of '" + name + "'";
    }
    p.size = it->second;
    any = true;
  }
  std::set<std::string> names;
  for (const ShimParam& p : plan.params) names.insert(p.name);
  for (const auto& [param, size] : described)
    if (!names.count(param))
      return "targets.interface names '" + param + "', which is not a parameter of '" + name + "'";
  if (any) plan.interface = "described";
  return "";
}

// The probe calls the target once more: everything it can change through its
// arguments must be what the runtime puts back (sized pointers to numbers) or copies
// (numbers passed by value).
void decide_probe(ShimPlan& plan) {
  plan.probe = true;
  for (const ShimParam& p : plan.params) {
    if (p.kind != ShimParam::Kind::kOther) continue;
    std::string element;
    bool floating = false, plain = p.type.find_first_of("*&[<(") == std::string::npos;
    for (const std::string& word : words(p.type))
      if (word != "const" && word != "volatile")
        element += (element.empty() ? "" : " ") + (word.rfind("std::", 0) == 0 ? word.substr(5) : word);
    if (plain && (element == "bool" || arithmetic(element, floating))) continue;
    plan.probe = false;
    plan.no_probe = "'" + p.name + "' (" + p.type + ") is neither a number nor a pointer to numbers";
    return;
  }
}

// Without a description: the one length sizes the inputs; an output only when its
// elements are of an input's type (an element-wise map). A histogram's bins, a
// reduction's partial sums are shorter than the input, and poisoning them with its
// length would write past their end.
void infer_interface(ShimPlan& plan) {
  const std::vector<std::string> scalars = scalar_names(plan);
  if (scalars.size() != 1) return;
  std::set<std::string> input_types;
  for (const ShimParam& p : plan.params)
    if (p.kind == ShimParam::Kind::kInput) input_types.insert(p.element);
  for (ShimParam& p : plan.params) {
    const bool sized =
        p.kind == ShimParam::Kind::kInput || (p.kind == ShimParam::Kind::kOutput && input_types.count(p.element));
    if (!sized) continue;
    p.size = scalars.front();
    plan.interface = "inferred";
  }
}

}  // namespace

ShimPlan plan_shim(const std::string& file, const Extent& extent, const std::map<std::string, std::string>& described) {
  ShimPlan plan;
  const std::string decl = blank_comments(file.substr(extent.begin, extent.body_begin - extent.begin));
  const std::string name = unqualified(extent.name);
  if (name != extent.name) {
    plan.unsupported = "the target is a qualified name (" + extent.name + "); the shim wraps free functions";
    return plan;
  }
  const Declaration d = find_declaration(decl, name);
  if (d.name_at == std::string::npos) {
    plan.unsupported = "the parameter list of '" + name + "' could not be read";
    return plan;
  }
  plan.unsupported = read_return(decl, d, name, plan);
  if (plan.unsupported.empty()) plan.unsupported = read_params(decl, d, name, plan);
  if (plan.unsupported.empty()) plan.unsupported = apply_described(described, name, plan);
  if (!plan.unsupported.empty()) return plan;
  decide_probe(plan);
  if (plan.interface != "described") infer_interface(plan);
  return plan;
}

namespace {

// Where the shim's declarations go: after the file's include guard (`#pragma once`, or
// `#ifndef X` + `#define X` before anything else), so that a header included twice
// declares them once, and otherwise at the top.
std::size_t declarations_offset(const std::string& file) {
  const std::string plain = blank_comments(file);
  auto skip_space = [&](std::size_t at) {
    while (at < plain.size() && std::isspace(static_cast<unsigned char>(plain[at]))) ++at;
    return at;
  };
  auto line_end = [&](std::size_t at) {
    const std::size_t end = plain.find('\n', at);
    return end == std::string::npos ? plain.size() : end + 1;
  };
  auto directive = [&](std::size_t at, const std::string& name) {
    if (at >= plain.size() || plain[at] != '#') return false;
    const std::size_t word = skip_space(at + 1);
    return plain.compare(word, name.size(), name) == 0 &&
           (word + name.size() >= plain.size() || !ident_char(plain[word + name.size()]));
  };
  const std::size_t first = skip_space(0);
  if (directive(first, "pragma") && plain.find("once", first) < line_end(first)) return line_end(first);
  if (directive(first, "ifndef")) {
    const std::size_t second = skip_space(line_end(first));
    if (directive(second, "define")) return line_end(second);
  }
  return 0;
}

// Where a GNU attribute may go in a definition: its start, after a linkage specification
// (`extern "C"`) and any C++11 attributes (`[[nodiscard]]`), which must come first.
std::size_t attribute_offset(const std::string& decl_text) {
  const std::string plain = blank_comments(decl_text);
  std::size_t at = 0;
  for (;;) {
    while (at < plain.size() && std::isspace(static_cast<unsigned char>(plain[at]))) ++at;
    if (plain.compare(at, 6, "extern") == 0) {  // a linkage specification: extern "C"
      std::size_t quote = at + 6;
      while (quote < plain.size() && std::isspace(static_cast<unsigned char>(plain[quote]))) ++quote;
      if (quote >= plain.size() || plain[quote] != '"') return at;
      const std::size_t end = plain.find('"', quote + 1);
      if (end == std::string::npos) return at;
      at = end + 1;
      continue;
    }
    if (plain.compare(at, 2, "[[") != 0) return at;
    const std::size_t close = plain.find("]]", at);
    if (close == std::string::npos) return at;
    at = close + 2;
  }
}

// The element count as C: each factor of the product converted to a non-negative count.
std::string declared_count(const std::string& size) {
  if (size.empty()) return "-1LL";
  return "(long long)(" + count_expression(size) + ")";
}

// The user's build may warn on the wrapper's plain C (casts, conversions, a definition
// without a prototype) and treat warnings as errors.
constexpr const char* kWrapperWarningsOff = R"(#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wold-style-cast"
#pragma GCC diagnostic ignored "-Wuseless-cast"
#pragma GCC diagnostic ignored "-Wcast-qual"
#pragma GCC diagnostic ignored "-Wsign-conversion"
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wzero-as-null-pointer-constant"
#pragma GCC diagnostic ignored "-Wmissing-declarations"
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
)";

// The wrapper put after the target, under the target's own name: it records the call
// through the runtime's table and calls the renamed target (`impl`).
//
// Plain C, so that the file may be a header included from C as well as C++; every
// step is in libmaxcode_shim.so (runner/inject/shim_runtime.cc), which maxcode loads
// into the runs: without it the wrapper only calls the target.
//
// The measured code must be the code that ships (a timed run is a shimmed run). Left
// to itself the compiler inlined the target into the wrapper, twice (probe and call),
// with other registers and another alignment, and the wrapper's code moved the
// functions after it: an unchanged histogram loop ran 27 ms a call in the original's
// shimmed build and 15 ms in a candidate's, which confirmed a candidate 1.23x faster
// that is 0.86x as fast built plainly. So the target stays a function of its own,
// compiled as it would be without the shim (noinline, noclone); the wrapper goes into
// a section of its own, which the linker places after .text; and the runtime is
// reached through one weak table (a GOT entry, after the code) rather than weak
// functions, whose PLT entries sit before .text and moved all of it.
std::string shim_wrapper(const std::string& decl_text, const std::string& name, const std::string& impl,
                         const ShimPlan& plan) {
  std::string args;
  for (const ShimParam& p : plan.params) args += (args.empty() ? "" : ", ") + p.name;
  std::ostringstream wrapper;
  wrapper << "\n\n/* maxcode call shim: records each call of " << name << " (runner/workspace/call_shim.h) */\n"
          << kWrapperWarningsOff << std::string(decl_text).insert(attribute_offset(decl_text), "MAXCODE_SHIM_WRAPPER ")
          << " {\n"
          << "  const struct maxcode_shim_functions* maxcode_f = &maxcode_shim_table;\n"
          << "  struct maxcode_shim_call* maxcode_c = maxcode_f ? maxcode_f->enter() : 0;\n"
          << "  if (maxcode_c) {\n";
  for (const ShimParam& p : plan.params) {
    if (p.kind != ShimParam::Kind::kInput && p.kind != ShimParam::Kind::kOutput) continue;
    wrapper << "    maxcode_f->arg(maxcode_c, \"" << p.name << "\", \"" << p.element << "\", (const void*)" << p.name
            << ", " << (p.bytes ? std::string("1") : "sizeof(*" + p.name + ")") << ", " << declared_count(p.size) << ", "
            << (p.kind == ShimParam::Kind::kInput ? 1 : 0) << ", " << (p.floating ? 1 : 0) << ");\n";
  }
  wrapper << "    maxcode_f->call_begin(maxcode_c);\n  }\n";
  if (plan.probe) {
    // The probe: the target once more, right before the recorded call, on inputs the
    // runtime changed a little; it puts them back in probe_end, within microseconds.
    // Its result is dropped: the recorded call's is the one returned.
    wrapper << "  if (maxcode_c && maxcode_f->probe_begin(maxcode_c)) {\n"
            << "    (void)" << impl << "(" << args << ");\n"
            << "    maxcode_f->probe_end(maxcode_c);\n  }\n";
  }
  wrapper << "  {\n    ";
  if (!plan.returns_void) wrapper << "__typeof__(" << impl << "(" << args << ")) maxcode_result = ";
  wrapper << impl << "(" << args << ");\n"
          << "    if (maxcode_c) {\n      maxcode_f->call_end(maxcode_c);\n";
  if (!plan.return_element.empty())
    wrapper << "      maxcode_f->value(maxcode_c, \"return\", \"" << plan.return_element
            << "\", &maxcode_result, sizeof maxcode_result);\n";
  wrapper << "      maxcode_f->leave(maxcode_c);\n    }\n";
  if (!plan.returns_void) wrapper << "    return maxcode_result;\n";
  wrapper << "  }\n}\n#pragma GCC diagnostic pop\n";
  return wrapper.str();
}

// The runtime's table and the attributes, declared once per file (`guard`).
std::string shim_declarations(const std::string& guard) {
  std::ostringstream declarations;
  declarations << "/* maxcode call shim declarations (runner/inject/shim_runtime.cc) */\n"
               << "#ifndef " << guard << "\n#define " << guard << "\n"
               << "#ifndef MAXCODE_SHIM_API\n#define MAXCODE_SHIM_API\n"
               << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
               << "struct maxcode_shim_call;\n"
               << "struct maxcode_shim_functions {\n"
               << "  struct maxcode_shim_call* (*enter)(void);\n"
               << "  void (*arg)(struct maxcode_shim_call*, const char*, const char*, const void*, unsigned long, "
                  "long long, int, int);\n"
               << "  void (*call_begin)(struct maxcode_shim_call*);\n"
               << "  int (*probe_begin)(struct maxcode_shim_call*);\n"
               << "  void (*probe_end)(struct maxcode_shim_call*);\n"
               << "  void (*call_end)(struct maxcode_shim_call*);\n"
               << "  void (*value)(struct maxcode_shim_call*, const char*, const char*, const void*, unsigned long);\n"
               << "  void (*leave)(struct maxcode_shim_call*);\n"
               << "};\n"
               << "extern const struct maxcode_shim_functions maxcode_shim_table __attribute__((weak));\n"
               << "#ifdef __cplusplus\n}\n#endif\n"
               << "#define maxcode_shim_count(x) ((x) > 0 ? (unsigned long long)(x) : 0ULL)\n"
               // nvcc's front end knows neither noclone nor a section on a host function.
               << "#if defined(__CUDACC__)\n#define MAXCODE_SHIM_TARGET __attribute__((noinline))\n"
               << "#define MAXCODE_SHIM_WRAPPER\n"
               << "#elif defined(__clang__)\n#define MAXCODE_SHIM_TARGET __attribute__((noinline))\n"
               << "#define MAXCODE_SHIM_WRAPPER __attribute__((section(\"maxcode_shim_text\")))\n"
               << "#else\n#define MAXCODE_SHIM_TARGET __attribute__((noinline, noclone))\n"
               << "#define MAXCODE_SHIM_WRAPPER __attribute__((section(\"maxcode_shim_text\")))\n"
               << "#endif\n"
               << "#endif\n#endif\n";
  return declarations.str();
}

}  // namespace

std::string add_call_shim(const std::string& file, const Extent& extent, const ShimPlan& plan,
                          const ShimOptions& options) {
  if (!plan.unsupported.empty()) throw SourceError("no call shim: " + plan.unsupported);
  const std::string decl_text = file.substr(extent.begin, extent.body_begin - extent.begin);
  const std::string name = unqualified(extent.name);
  const Declaration d = find_declaration(blank_comments(decl_text), name);
  if (d.name_at == std::string::npos) throw SourceError("no call shim: the declaration of '" + name + "' moved");
  const std::string impl = name + "__maxcode_impl_" + options.tag;
  const std::string guard = "MAXCODE_SHIM_DECLARED_" + options.tag;

  std::string out = file;
  // GCC warns of noinline on an inline function (a target in a header): the target is
  // still kept out of line, as above, for the wrapper's sake.
  out.insert(extent.end, "\n#pragma GCC diagnostic pop" + shim_wrapper(decl_text, name, impl, plan));
  out.replace(extent.begin + d.name_at, name.size(), impl);
  out.insert(extent.begin + attribute_offset(decl_text), "MAXCODE_SHIM_TARGET ");
  out.insert(extent.begin, "\n#pragma GCC diagnostic push\n#pragma GCC diagnostic ignored \"-Wpragmas\"\n"
                           "#pragma GCC diagnostic ignored \"-Wattributes\"\n");
  out.insert(declarations_offset(file), shim_declarations(guard));
  return out;
}

}  // namespace maxcode
