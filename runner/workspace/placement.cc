#include "runner/workspace/placement.h"

#include <algorithm>
#include <optional>

#include "runner/util/text.h"

namespace maxcode {

namespace {

// Where the comment lines right above `at` begin (`//` lines and `/* */` blocks with no
// blank line between them and the definition), or `at` when there are none: a
// definition's comment travels with it.
std::size_t comment_above(std::string_view text, std::size_t at) {
  if (at == 0) return 0;
  const std::size_t nl = text.rfind('\n', at - 1);
  const std::size_t line_start = nl == std::string_view::npos ? 0 : nl + 1;
  // Only when the definition starts its line.
  if (!trim(text.substr(line_start, at - line_start)).empty()) return at;
  std::size_t begin = line_start;
  while (begin > 0) {
    const std::size_t prev_end = begin - 1;  // the newline ending the line above
    const std::size_t nl = prev_end == 0 ? std::string_view::npos : text.rfind('\n', prev_end - 1);
    const std::size_t prev_start = nl == std::string_view::npos ? 0 : nl + 1;
    const std::string_view line = trim(text.substr(prev_start, prev_end - prev_start));
    if (line.rfind("//", 0) == 0) {
      begin = prev_start;
    } else if (line.size() >= 2 && line.substr(line.size() - 2) == "*/") {
      const std::size_t open = text.rfind("/*", prev_end);
      if (open == std::string_view::npos) break;
      const std::size_t open_nl = open == 0 ? std::string_view::npos : text.rfind('\n', open - 1);
      const std::size_t open_line = open_nl == std::string_view::npos ? 0 : open_nl + 1;
      if (!trim(text.substr(open_line, open - open_line)).empty()) break;  // code before the comment
      begin = open_line;
    } else {
      break;
    }
  }
  return begin;
}

// The unit function that a definition of the candidate's code redefines, if any.
std::optional<std::size_t> owner(const Unit& unit, const Definition& d) {
  std::vector<std::size_t> same_name;
  for (std::size_t i = 0; i < unit.functions.size(); ++i)
    if (unit.functions[i].base_name == d.base_name) same_name.push_back(i);
  if (same_name.size() == 1) return same_name.front();
  for (std::size_t i : same_name)  // overloads: the one with this signature
    if (canonical_text(unit.functions[i].extent.signature) == canonical_text(d.extent.signature)) return i;
  return std::nullopt;
}

struct Replacement {
  std::size_t begin;  // in the original
  std::size_t end;
  std::string text;
};

}  // namespace

Placement place_definitions(std::string_view original, const Unit& unit, std::string_view code) {
  std::vector<Definition> defs;
  for (Definition& d : list_definitions(code))
    if (!d.in_class) defs.push_back(std::move(d));

  // Which definitions of the code redefine which unit function.
  std::vector<std::optional<std::size_t>> owners;
  std::vector<int> times(unit.functions.size(), 0);
  for (const Definition& d : defs) {
    owners.push_back(owner(unit, d));
    if (owners.back() && ++times[*owners.back()] > 1)
      return {"", "the code defines '" + unit.functions[*owners.back()].name +
                      "' twice; give each function of the unit one definition"};
  }
  const bool any = std::any_of(owners.begin(), owners.end(), [](const auto& o) { return o.has_value(); });
  if (!any) {
    std::string names;
    for (const std::string& n : unit.names()) names += (names.empty() ? "" : ", ") + n;
    return {"", "the code defines none of the functions of the unit of '" + unit.functions.front().name + "' (" +
                    names + "); give the complete new definition of at least one of them"};
  }
  // The target alone: the code replaces its definition whole, helpers and all, as it
  // stands (a unit of one works as a target always has).
  const bool target_only = std::all_of(owners.begin(), owners.end(), [](const auto& o) { return !o || *o == 0; });
  if (target_only) {
    const Extent& e = unit.functions.front().extent;
    return {std::string(original.substr(0, e.begin)) + std::string(code) + std::string(original.substr(e.end)), ""};
  }

  // Cut the code into the redefinitions (each with the comment above it) and the rest.
  std::vector<Replacement> replacements;
  std::string rest;
  std::size_t at = 0;
  for (std::size_t i = 0; i < defs.size(); ++i) {
    if (!owners[i]) continue;
    const std::size_t begin = std::max(at, comment_above(code, defs[i].extent.begin));
    const std::string_view before = trim(code.substr(at, begin - at));
    if (!before.empty()) rest += std::string(rest.empty() ? "" : "\n\n") + std::string(before);
    const Extent& old = unit.functions[*owners[i]].extent;
    // The candidate's comment replaces the original's; without one the original's stays.
    const std::size_t old_begin = begin < defs[i].extent.begin ? comment_above(original, old.begin) : old.begin;
    replacements.push_back({old_begin, old.end, std::string(code.substr(begin, defs[i].extent.end - begin))});
    at = defs[i].extent.end;
  }
  const std::string_view after = trim(code.substr(at));
  if (!after.empty()) rest += std::string(rest.empty() ? "" : "\n\n") + std::string(after);

  std::sort(replacements.begin(), replacements.end(),
            [](const Replacement& a, const Replacement& b) { return a.begin < b.begin; });
  if (!rest.empty()) replacements.front().text = rest + "\n\n" + replacements.front().text;
  std::string out(original);
  for (auto r = replacements.rbegin(); r != replacements.rend(); ++r) out.replace(r->begin, r->end - r->begin, r->text);
  return {out, ""};
}

}  // namespace maxcode
