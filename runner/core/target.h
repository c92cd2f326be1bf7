// Target: the one function a search tries to make faster, where it lives, and its unit:
// the functions of the same file it calls, which a candidate may redefine with it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace maxcode {

struct Target {
  std::string file;        // relative to the repository root, '/' separators
  std::string function;    // as the user named it
  std::string signature;   // the definition's declaration text
  std::size_t line_begin = 0;
  std::size_t line_end = 0;
  // The unit: this function first, then the functions of the same file it calls,
  // directly or through them (runner/workspace/unit.h). Empty: not worked out.
  std::vector<std::string> unit = {};
  // What the unit leaves out or could not follow (callees in other files, calls through
  // pointers), each saying what the user can set.
  std::vector<std::string> unit_notes = {};
};

inline nlohmann::json to_json(const Target& t) {
  nlohmann::json j{{"file", t.file},           {"function", t.function}, {"signature", t.signature},
                   {"line_begin", t.line_begin}, {"line_end", t.line_end}};
  if (!t.unit.empty()) j["unit"] = t.unit;
  if (!t.unit_notes.empty()) j["unit_notes"] = t.unit_notes;
  return j;
}

// The inverse of to_json; `unit` and `unit_notes` may be absent (older files).
inline Target target_from_json(const nlohmann::json& j) {
  Target t{j.at("file").get<std::string>(), j.at("function").get<std::string>(),
           j.value("signature", ""), j.value("line_begin", std::size_t{0}),
           j.value("line_end", std::size_t{0})};
  t.unit = j.value("unit", std::vector<std::string>{});
  t.unit_notes = j.value("unit_notes", std::vector<std::string>{});
  return t;
}

}  // namespace maxcode
