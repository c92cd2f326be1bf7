// Writing the call shim (see call_shim.h). The declaration is read with a small
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

std::string without_comments(std::string text) {
  for (std::size_t at = 0; at < text.size(); ++at) {
    if (text.compare(at, 2, "//") == 0) {
      const std::size_t end = text.find('\n', at);
      std::fill(text.begin() + at, end == std::string::npos ? text.end() : text.begin() + end, ' ');
    } else if (text.compare(at, 2, "/*") == 0) {
      const std::size_t end = text.find("*/", at + 2);
      std::fill(text.begin() + at, end == std::string::npos ? text.end() : text.begin() + end + 2, ' ');
    }
  }
  return text;
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

}  // namespace

ShimPlan plan_shim(const std::string& file, const Extent& extent,
                   const std::map<std::string, std::string>& described) {
  ShimPlan plan;
  const std::string decl = without_comments(file.substr(extent.begin, extent.body_begin - extent.begin));
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
  const std::vector<std::string> prefix = words(decl.substr(0, d.name_at));
  if (std::find(prefix.begin(), prefix.end(), "template") != prefix.end()) {
    plan.unsupported = "'" + name + "' is a template";
    return plan;
  }
  if (std::find(prefix.begin(), prefix.end(), "__global__") != prefix.end()) {
    plan.unsupported = "'" + name + "' is a kernel; the shim wraps host functions";
    return plan;
  }
  const std::string tail = collapse(decl.substr(d.close + 1));
  if (!tail.empty() && tail != "noexcept") {
    plan.unsupported = "the declaration of '" + name + "' ends in '" + tail + "'";
    return plan;
  }
  static const std::set<std::string> kSpecifiers = {"static", "inline", "extern", "constexpr", "__host__",
                                                    "[[nodiscard]]", "__forceinline__"};
  std::string returns;
  for (const std::string& word : prefix)
    if (!kSpecifiers.count(word)) returns += (returns.empty() ? "" : " ") + word;
  plan.returns_void = returns == "void";
  std::vector<std::string> list = split_top_level(decl.substr(d.open + 1, d.close - d.open - 1));
  if (list.size() == 1 && collapse(list[0]) == "void") list.clear();
  for (const std::string& text : list) {
    ShimParam p = read_param(text);
    if (p.name.empty()) {
      plan.unsupported = "a parameter of '" + name + "' has no name (" + collapse(text) + ")";
      return plan;
    }
    if (collapse(text).find("...") != std::string::npos) {
      plan.unsupported = "'" + name + "' takes variable arguments";
      return plan;
    }
    plan.params.push_back(p);
  }
  std::set<std::string> names;
  std::vector<std::string> scalars;
  for (const ShimParam& p : plan.params) {
    names.insert(p.name);
    if (p.kind == ShimParam::Kind::kScalar) scalars.push_back(p.name);
  }
  bool any_described = false;
  for (ShimParam& p : plan.params) {
    auto it = described.find(p.name);
    if (it == described.end()) continue;
    if (p.kind != ShimParam::Kind::kInput && p.kind != ShimParam::Kind::kOutput) {
      plan.unsupported = "targets.interface describes '" + p.name + "', which is not a pointer to numbers (" +
                         p.type + ")";
      return plan;
    }
    std::string factor;
    for (char c : it->second + "*") {
      if (c != '*') {
        factor += c;
        continue;
      }
      const std::string f = collapse(factor);
      factor.clear();
      if (f.empty() || std::isdigit(static_cast<unsigned char>(f[0]))) continue;
      if (std::find(scalars.begin(), scalars.end(), f) == scalars.end()) {
        plan.unsupported = "targets.interface: the size of '" + p.name + "' names '" + f +
                           "', which is not an integer parameter of '" + name + "'";
        return plan;
      }
    }
    p.size = it->second;
    any_described = true;
  }
  for (const auto& [param, size] : described) {
    if (!names.count(param)) {
      plan.unsupported = "targets.interface names '" + param + "', which is not a parameter of '" + name + "'";
      return plan;
    }
  }
  if (any_described) {
    plan.interface = "described";
  } else if (scalars.size() == 1) {
    // The one length sizes the inputs; an output only when its elements are of an
    // input's type (an element-wise map). A histogram's bins, a reduction's partial
    // sums are shorter than the input, and poisoning them with its length would write
    // past their end.
    std::set<std::string> input_types;
    for (const ShimParam& p : plan.params)
      if (p.kind == ShimParam::Kind::kInput) input_types.insert(p.element);
    bool any = false;
    for (ShimParam& p : plan.params) {
      const bool sized = p.kind == ShimParam::Kind::kInput ||
                         (p.kind == ShimParam::Kind::kOutput && input_types.count(p.element));
      if (!sized) continue;
      p.size = scalars.front();
      any = true;
    }
    if (any) plan.interface = "inferred";
  }
  return plan;
}

std::string add_call_shim(const std::string& file, const Extent& extent, const ShimPlan& plan,
                          const ShimOptions& options) {
  if (!plan.unsupported.empty()) throw SourceError("no call shim: " + plan.unsupported);
  const std::string decl_text = file.substr(extent.begin, extent.body_begin - extent.begin);
  const std::string name = unqualified(extent.name);
  const Declaration d = find_declaration(without_comments(decl_text), name);
  if (d.name_at == std::string::npos) throw SourceError("no call shim: the declaration of '" + name + "' moved");
  const std::string impl = name + "__maxcode_impl_" + options.tag;
  const std::string ns = "maxcode_shim_" + options.tag;

  std::ostringstream wrapper;
  wrapper << "\n\n// maxcode call shim (check run only)\n" << decl_text << " {\n"
          << "  " << ns << "::State& maxcode_state = " << ns << "::state();\n"
          << "  const long maxcode_call = maxcode_state.calls++;\n";
  std::string args;
  for (const ShimParam& p : plan.params) args += (args.empty() ? "" : ", ") + p.name;
  auto buffers = [&](auto&& each) {
    for (const ShimParam& p : plan.params)
      if (!p.size.empty() && (p.kind == ShimParam::Kind::kInput || p.kind == ShimParam::Kind::kOutput))
        each(p, "maxcode_n_" + p.name);
  };
  buffers([&](const ShimParam& p, const std::string& n) {
    wrapper << "  const unsigned long long " << n << " = " << count_expression(p.size) << ";\n";
  });
  wrapper << "  if (maxcode_state.mode == 1) {\n";
  buffers([&](const ShimParam& p, const std::string& n) {
    if (p.kind == ShimParam::Kind::kInput)
      wrapper << "    if (maxcode_call > 0) " << ns << "::perturb(const_cast<" << p.element << "*>(" << p.name
              << "), " << n << ", maxcode_call);\n";
    else
      wrapper << "    " << ns << "::poison(" << p.name << ", " << n << ");\n";
  });
  wrapper << "  }\n";
  buffers([&](const ShimParam& p, const std::string& n) {
    wrapper << "  const unsigned long long maxcode_entry_" << p.name << " = " << ns << "::hash(" << p.name << ", "
            << n << ");\n";
  });
  wrapper << "  const long long maxcode_t0 = " << ns << "::now_ns();\n  "
          << (plan.returns_void ? "" : "auto maxcode_result = ") << impl << "(" << args << ");\n"
          << "  const long long maxcode_t1 = " << ns << "::now_ns();\n"
          << "  std::fprintf(maxcode_state.log, \"call %ld %lld\\n\", maxcode_call, maxcode_t1 - maxcode_t0);\n";
  buffers([&](const ShimParam& p, const std::string& n) {
    wrapper << "  std::fprintf(maxcode_state.log, \"arg %ld " << p.name << " " << (p.kind == ShimParam::Kind::kInput ? "in" : "out")
            << " %p %llu %016llx %016llx\\n\", maxcode_call, (const void*)" << p.name << ", " << n
            << ", maxcode_entry_" << p.name << ", " << ns << "::hash(" << p.name << ", " << n << "));\n";
    if (p.kind == ShimParam::Kind::kOutput)
      wrapper << "  if (maxcode_state.mode == 1) " << ns << "::record(maxcode_state, maxcode_call, \"" << p.name
              << "\", \"" << p.element << "\", " << p.name << ", " << n << ");\n";
  });
  wrapper << "  std::fflush(maxcode_state.log);\n";
  if (!plan.returns_void) wrapper << "  return maxcode_result;\n";
  wrapper << "}\n";

  std::ostringstream support;
  support << "// maxcode call shim support (check run only)\n"
          << "#include <cmath>\n#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n#include <ctime>\n"
          << "#include <type_traits>\n"
          << "namespace " << ns << " {\n"
          << "struct State { std::FILE* log = nullptr; int mode = 0; long calls = 0; };\n"
          << "inline const char* dir() { return \"" << options.record_dir << "\"; }\n"
          << "inline State& state() {\n"
          << "  static State s = [] {\n"
          << "    State made;\n"
          << "    char path[4096];\n"
          << "    std::snprintf(path, sizeof path, \"%s/mode\", dir());\n"
          << "    if (std::FILE* m = std::fopen(path, \"r\")) {\n"
          << "      char word[32] = {0};\n"
          << "      if (std::fscanf(m, \"%31s\", word) == 1 && std::strcmp(word, \"perturb\") == 0) made.mode = 1;\n"
          << "      std::fclose(m);\n"
          << "    }\n"
          << "    std::snprintf(path, sizeof path, \"%s/calls.txt\", dir());\n"
          << "    made.log = std::fopen(path, \"w\");\n"
          << "    if (!made.log) made.log = std::fopen(\"/dev/null\", \"w\");\n"
          << "    return made;\n"
          << "  }();\n"
          << "  return s;\n"
          << "}\n"
          << "template <class T> inline unsigned long long maxcode_shim_count_of(T v) { return v > 0 ? (unsigned long long)v : 0; }\n"
          << "inline long long now_ns() {\n"
          << "  timespec t;\n"
          << "  clock_gettime(CLOCK_MONOTONIC, &t);\n"
          << "  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;\n"
          << "}\n"
          << "template <class T> inline unsigned long long hash(const T* p, unsigned long long n) {\n"
          << "  if (!p) return 0;\n"
          << "  const unsigned char* b = (const unsigned char*)p;\n"
          << "  unsigned long long h = 1469598103934665603ULL;\n"
          << "  for (unsigned long long i = 0; i < n * sizeof(T); ++i) h = (h ^ b[i]) * 1099511628211ULL;\n"
          << "  return h;\n"
          << "}\n"
          << "template <class T> inline void poison(T* p, unsigned long long n) {\n"
          << "  if (p) std::memset((void*)p, std::is_floating_point<T>::value ? 0xFF : 0xA5, n * sizeof(T));\n"
          << "}\n"
          << "// Odd calls change every element; even ones a sparse scattered subset away from both\n"
          << "// ends, so that a cache keyed by a sample of the input (its first or last bytes, a few\n"
          << "// positions) hits and returns a stale result. Bounded over many calls. (Overloads, not\n"
          << "// if constexpr: the project may predate C++17.)\n"
          << "inline void perturb_value(float& v, unsigned long long k, bool) { v = (float)(0.5 * v + (double)(k % 97) / 8.0); }\n"
          << "inline void perturb_value(double& v, unsigned long long k, bool) { v = 0.5 * v + (double)(k % 97) / 8.0; }\n"
          << "template <class T> inline void perturb_value(T& v, unsigned long long, bool flip) { if (flip) v = (T)(v ^ (T)1); }\n"
          << "template <class T> inline void perturb(T* p, unsigned long long n, long call) {\n"
          << "  if (!p) return;\n"
          << "  const bool sparse = call % 2 == 0 && n > 256;\n"
          << "  for (unsigned long long i = 0; i < n; ++i) {\n"
          << "    const unsigned long long k = ((i * 2654435761ULL) ^ ((unsigned long long)call * 40503ULL)) >> 7;\n"
          << "    if (sparse && (i < 64 || i + 64 >= n || (k * 0x9E3779B97F4A7C15ULL) >> 58 != 0)) continue;\n"
          << "    perturb_value(p[i], k, sparse || (i + (unsigned long long)call) % 2 == 0);\n"
          << "  }\n"
          << "}\n"
          << "template <class T> inline void record(State& s, long call, const char* name, const char* type, const T* p,\n"
          << "                                      unsigned long long n) {\n"
          << "  if (!p || call >= " << options.recorded_calls << ") return;\n"
          << "  unsigned long long stride = 1;\n"
          << "  while (n * sizeof(T) / stride > " << options.recorded_bytes << "ULL) stride *= 2;\n"
          << "  const unsigned long long offset = " << options.salt << "ULL % stride;\n"
          << "  char path[4096];\n"
          << "  std::snprintf(path, sizeof path, \"%s/out-%ld-%s.bin\", dir(), call, name);\n"
          << "  std::FILE* f = std::fopen(path, \"wb\");\n"
          << "  if (!f) return;\n"
          << "  unsigned long long kept = 0;\n"
          << "  for (unsigned long long i = offset; i < n; i += stride, ++kept) std::fwrite(p + i, sizeof(T), 1, f);\n"
          << "  std::fclose(f);\n"
          << "  std::fprintf(s.log, \"out %ld %s %s %llu %llu %llu\\n\", call, name, type, kept, stride, offset);\n"
          << "}\n"
          << "}  // namespace " << ns << "\n"
          << "#define maxcode_shim_count(x) " << ns << "::maxcode_shim_count_of(x)\n\n";

  std::string out = file;
  out.insert(extent.end, wrapper.str());
  out.replace(extent.begin + d.name_at, name.size(), impl);
  return support.str() + out;
}

}  // namespace maxcode
