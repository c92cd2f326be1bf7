#include "runner/profile/overload.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace maxcode {

namespace {

struct Parameter {
  std::vector<std::string> words;  // type words, qualifiers and the parameter's name left out
  int indirection = 0;             // `*`, `&` and `[]`
};

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The contents of the parameter list: the last top-level (...) group of `text`
// (demangled names end with it, before qualifiers; `(anonymous namespace)` comes
// earlier), or the first one after `name` in a declaration.
std::optional<std::string> parameter_text(const std::string& text, std::size_t from, bool last) {
  std::optional<std::string> found;
  int angle = 0;
  for (std::size_t i = from; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<') ++angle;
    else if (c == '>' && angle > 0) --angle;
    else if (c == '(' && angle == 0) {
      int depth = 0;
      std::size_t j = i;
      for (; j < text.size(); ++j) {
        if (text[j] == '(') ++depth;
        else if (text[j] == ')' && --depth == 0) break;
      }
      if (j == text.size()) return found;
      found = text.substr(i + 1, j - i - 1);
      if (!last) return found;
      i = j;
    }
  }
  return found;
}

// Top-level comma-separated parts.
std::vector<std::string> split_parameters(const std::string& text) {
  std::vector<std::string> parts;
  std::string part;
  int depth = 0;
  for (char c : text) {
    if (c == '<' || c == '(' || c == '[') ++depth;
    if ((c == '>' || c == ')' || c == ']') && depth > 0) --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(part);
      part.clear();
    } else {
      part += c;
    }
  }
  if (part.find_first_not_of(" \t\n") != std::string::npos) parts.push_back(part);
  if (parts.size() == 1 && (parts[0] == "void" || parts[0] == " void")) parts.clear();
  return parts;
}

// Spellings that demangle to something else: what the source writes, as words.
const std::map<std::string, std::vector<std::string>>& aliases() {
  static const std::map<std::string, std::vector<std::string>> table = {
      {"size_t", {"unsigned", "long"}},   {"ssize_t", {"long"}},           {"ptrdiff_t", {"long"}},
      {"int64_t", {"long"}},              {"uint64_t", {"unsigned", "long"}}, {"int32_t", {"int"}},
      {"uint32_t", {"unsigned", "int"}},  {"int16_t", {"short"}},          {"uint16_t", {"unsigned", "short"}},
      {"int8_t", {"signed", "char"}},     {"uint8_t", {"unsigned", "char"}}, {"string", {"basic_string"}},
      {"string_view", {"basic_string_view"}}, {"uint", {"unsigned", "int"}}};
  return table;
}

bool is_ignored_word(const std::string& w) {
  static const std::set<std::string> words = {"const",      "volatile",   "struct",    "class", "typename",
                                              "enum",       "restrict",   "__restrict", "__restrict__",
                                              "register",   "std",        "__cxx11"};
  return words.count(w) > 0;
}

bool is_builtin(const std::string& w) {
  static const std::set<std::string> words = {"int",   "char",     "long",   "short", "float", "double",
                                              "bool",  "unsigned", "signed", "void",  "wchar_t", "half",
                                              "char8_t", "char16_t", "char32_t", "__half", "auto"};
  return words.count(w) > 0 || aliases().count(w) > 0;
}

Parameter parse_parameter(std::string text, bool declared, const std::set<std::string>& wildcards) {
  if (declared) {
    // A default argument is no part of the type.
    int depth = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '<' || text[i] == '(') ++depth;
      if ((text[i] == '>' || text[i] == ')') && depth > 0) --depth;
      if (text[i] == '=' && depth == 0) {
        text.resize(i);
        break;
      }
    }
  }
  Parameter p;
  std::vector<std::string> words;
  std::string word;
  bool last_is_word = false;
  for (char c : text + ' ') {
    if (is_word_char(c)) {
      word += c;
      continue;
    }
    if (!word.empty()) words.push_back(word), word.clear(), last_is_word = true;
    if (c == '*' || c == '&' || c == '[') p.indirection += 1, last_is_word = false;
    else if (c != ' ' && c != '\t' && c != '\n') last_is_word = false;
  }
  // A declaration names its parameter last: `const float* x`, `int n`; not `unsigned int`.
  if (declared && last_is_word && words.size() >= 2 && !is_builtin(words.back())) words.pop_back();
  for (const std::string& w : words) {
    if (is_ignored_word(w) || wildcards.count(w)) continue;
    if (auto it = aliases().find(w); it != aliases().end()) {
      p.words.insert(p.words.end(), it->second.begin(), it->second.end());
    } else {
      p.words.push_back(w);
    }
  }
  return p;
}

// Template parameter names of a declaration (`template <typename T, int N>`): they fit
// any type in the demangled name.
std::set<std::string> template_parameters(const std::string& signature) {
  std::set<std::string> names;
  std::size_t at = signature.find("template");
  while (at != std::string::npos) {
    const std::size_t open = signature.find('<', at);
    if (open == std::string::npos) break;
    int depth = 0;
    std::size_t close = open;
    for (; close < signature.size(); ++close) {
      if (signature[close] == '<') ++depth;
      else if (signature[close] == '>' && --depth == 0) break;
    }
    for (const std::string& part : split_parameters(signature.substr(open + 1, close - open - 1))) {
      std::string stripped = part;
      if (const auto eq = stripped.find('='); eq != std::string::npos) stripped.resize(eq);
      std::string last;
      std::string word;
      for (char c : stripped + ' ') {
        if (is_word_char(c)) word += c;
        else if (!word.empty()) last = word, word.clear();
      }
      if (!last.empty()) names.insert(last);
    }
    at = signature.find("template", close);
  }
  return names;
}

std::optional<std::vector<Parameter>> declared_parameters(const Located& d) {
  const std::string& sig = d.extent.signature;
  const std::size_t name_at = sig.find(d.extent.name);
  auto text = parameter_text(sig, name_at == std::string::npos ? 0 : name_at + d.extent.name.size(), false);
  if (!text) return std::nullopt;
  const std::set<std::string> wildcards = template_parameters(sig);
  std::vector<Parameter> out;
  for (const std::string& part : split_parameters(*text)) out.push_back(parse_parameter(part, true, wildcards));
  return out;
}

bool fits(const Parameter& declared, const Parameter& demangled) {
  if (declared.indirection != demangled.indirection) return false;
  for (const std::string& w : declared.words)
    if (std::find(demangled.words.begin(), demangled.words.end(), w) == demangled.words.end()) return false;
  // Every builtin word of the demangled type must be declared too: `int` vs `unsigned int`.
  for (const std::string& w : demangled.words)
    if (is_builtin(w) && std::find(declared.words.begin(), declared.words.end(), w) == declared.words.end() &&
        !declared.words.empty())
      return false;
  return true;
}

bool inside(const Located& d, const std::string& file, int line) {
  return d.target.file == file && line > 0 && static_cast<std::size_t>(line) >= d.target.line_begin &&
         static_cast<std::size_t>(line) <= d.target.line_end;
}

std::optional<std::size_t> only(const std::vector<std::size_t>& picks) {
  if (picks.size() == 1) return picks.front();
  return std::nullopt;
}

bool same_function(const std::string& entry, const std::string& wanted) {
  auto ends_with = [](const std::string& a, const std::string& b) {
    return a.size() > b.size() && a.compare(a.size() - b.size(), b.size(), b) == 0 &&
           a.compare(a.size() - b.size() - 2, 2, "::") == 0;
  };
  return entry == wanted || ends_with(entry, wanted) || ends_with(wanted, entry);
}

}  // namespace

std::optional<std::size_t> match_overload(const std::vector<Located>& definitions, const ProfileEntry& entry) {
  // Debug info first: the declaration line, then the hottest line.
  std::vector<std::size_t> picks;
  for (std::size_t i = 0; i < definitions.size(); ++i)
    if (inside(definitions[i], entry.file, entry.line)) picks.push_back(i);
  if (auto one = only(picks)) return one;
  if (!entry.lines.empty()) {
    picks.clear();
    for (std::size_t i = 0; i < definitions.size(); ++i)
      if (inside(definitions[i], entry.lines[0].file, entry.lines[0].line)) picks.push_back(i);
    if (auto one = only(picks)) return one;
  }
  // Then the demangled parameter types.
  const auto text = parameter_text(entry.name, 0, true);
  if (!text) return std::nullopt;
  std::vector<Parameter> wanted;
  for (const std::string& part : split_parameters(*text)) wanted.push_back(parse_parameter(part, false, {}));
  picks.clear();
  for (std::size_t i = 0; i < definitions.size(); ++i) {
    const auto declared = declared_parameters(definitions[i]);
    if (!declared || declared->size() != wanted.size()) continue;
    bool all = true;
    for (std::size_t k = 0; k < wanted.size() && all; ++k) all = fits((*declared)[k], wanted[k]);
    if (all) picks.push_back(i);
  }
  return only(picks);
}

std::optional<OverloadPick> pick_overload(const std::vector<Located>& definitions, const Profile& profile,
                                          const std::string& function) {
  std::vector<double> share(definitions.size(), 0);
  std::vector<std::string> names(definitions.size());
  std::vector<std::string> lists(definitions.size());
  bool any = false;
  for (const auto* list : {&profile.functions, &profile.kernels}) {
    for (const ProfileEntry& e : *list) {
      if (e.external || !same_function(e.function, function)) continue;
      const auto index = match_overload(definitions, e);
      if (!index) continue;
      any = true;
      share[*index] += e.share;
      if (names[*index].empty()) names[*index] = e.name, lists[*index] = e.kind == "gpu" ? "GPU" : "CPU";
    }
  }
  if (!any) return std::nullopt;
  const std::size_t best =
      static_cast<std::size_t>(std::max_element(share.begin(), share.end()) - share.begin());
  OverloadPick pick;
  pick.index = best;
  pick.share = share[best];
  pick.list = lists[best];
  pick.profiled = names[best];
  char line[512];
  std::snprintf(line, sizeof line, "%s has %zu definitions; the profile says %s:%zu is hot: %s, %.1f%% of %s time",
                function.c_str(), definitions.size(), definitions[best].target.file.c_str(),
                definitions[best].target.line_begin, pick.profiled.c_str(), pick.share * 100, pick.list.c_str());
  pick.note = line;
  for (std::size_t i = 0; i < definitions.size(); ++i) {
    if (i == best) continue;
    std::snprintf(line, sizeof line, "; %s:%zu %.1f%%", definitions[i].target.file.c_str(),
                  definitions[i].target.line_begin, share[i] * 100);
    pick.note += line;
  }
  return pick;
}

}  // namespace maxcode
