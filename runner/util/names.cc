#include "runner/util/names.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <vector>

namespace maxcode {

namespace {

bool starts_with(std::string_view text, std::size_t at, std::string_view prefix) {
  return text.substr(at, prefix.size()) == prefix;
}

bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

// Length of the operator name starting at `at` ("operator()", "operator<<=", "operator
// new[]", "operator bool"), so that its brackets are not taken for structure.
std::size_t operator_length(std::string_view text, std::size_t at) {
  std::size_t i = at + 8;  // "operator"
  if (starts_with(text, i, "()") || starts_with(text, i, "[]")) return i + 2 - at;
  if (i < text.size() && text[i] == ' ') {  // new, delete, conversion operators
    ++i;
    while (i < text.size() && (is_identifier_char(text[i]) || text[i] == ':' || text[i] == '*' ||
                               text[i] == '&' || text[i] == ' ') && text[i] != '(')
      ++i;
    while (i > at + 8 && text[i - 1] == ' ') --i;
    if (starts_with(text, i, "[]")) i += 2;
    return i - at;
  }
  static constexpr std::string_view kOperatorChars = "+-*/%^&|~!=<>,";
  while (i < text.size() && kOperatorChars.find(text[i]) != std::string_view::npos) ++i;
  return i - at;
}

std::string strip_clone_suffixes(std::string_view name) {
  std::string text(name);
  for (;;) {
    std::size_t at = text.rfind(" [clone ");
    if (at == std::string::npos || text.back() != ']') break;
    text.erase(at);
  }
  return text;
}

}  // namespace

std::string demangle(std::string_view name) {
  std::string text(name);
  if (std::size_t at = text.find('@'); at != std::string::npos && at > 0) text.erase(at);
  if (text.rfind("_Z", 0) != 0) return text;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(text.c_str(), nullptr, nullptr, &status),
                                            std::free);
  return status == 0 && out ? std::string(out.get()) : text;
}

namespace {

// The name in a demangled signature: after the return type, before the parameter list
// (found at nesting depth 0, operators' own brackets skipped).
std::string_view name_part(std::string_view text) {
  int depth = 0;
  std::size_t name_begin = 0, name_end = text.size();
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (depth == 0 && starts_with(text, i, "(anonymous namespace)")) {
      i += 20;
      continue;
    }
    if (starts_with(text, i, "operator") && (i == 0 || !is_identifier_char(text[i - 1])) &&
        (i + 8 >= text.size() || !is_identifier_char(text[i + 8]))) {
      i += operator_length(text, i) - 1;
      continue;
    }
    if (c == '<' || c == '[' || c == '{') ++depth;
    else if ((c == '>' || c == ']' || c == '}') && depth > 0) --depth;
    else if (c == '(') {
      if (depth == 0) {
        name_end = i;
        break;
      }
      ++depth;
    } else if (c == ')' && depth > 0) {
      --depth;
    } else if (c == ' ' && depth == 0) {
      name_begin = i + 1;  // what came before was the return type
    }
  }
  return text.substr(name_begin, name_end - name_begin);
}

// `name` without template arguments (but with an operator's own brackets).
std::string without_template_arguments(std::string_view name) {
  std::string plain;
  int depth = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (depth == 0 && starts_with(name, i, "operator") && (i == 0 || !is_identifier_char(name[i - 1]))) {
      std::size_t n = operator_length(name, i);
      plain.append(name.substr(i, n));
      i += n - 1;
      continue;
    }
    if (name[i] == '<') ++depth;
    else if (name[i] == '>' && depth > 0) --depth;
    else if (depth == 0) plain.push_back(name[i]);
  }
  return plain;
}

}  // namespace

std::string function_name_of(std::string_view demangled) {
  const std::string text = strip_clone_suffixes(demangled);
  // Drop template arguments, then anonymous namespaces, and cut at a lambda or unnamed type.
  const std::string plain = without_template_arguments(name_part(text));
  std::vector<std::string> parts;
  std::size_t begin = 0;
  for (;;) {
    std::size_t end = plain.find("::", begin);
    std::string part = plain.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    if (part.rfind("{", 0) == 0) break;  // {lambda(...)#1}, {unnamed type#1}
    if (!part.empty() && part != "(anonymous namespace)") parts.push_back(part);
    if (end == std::string::npos) break;
    begin = end + 2;
  }
  std::string result;
  for (const auto& part : parts) result += (result.empty() ? "" : "::") + part;
  // C clones keep their suffix unmangled: "hot.cold", "fill.part.0", "main.constprop.1".
  if (std::size_t dot = result.find('.'); dot != std::string::npos && dot > 0 &&
                                          result.find("operator") == std::string::npos)
    result.erase(dot);
  return result;
}

}  // namespace maxcode
