// Candidate: one proposed rewrite of the target, in the forms a policy can produce.
#pragma once

#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace maxcode {

struct Candidate {
  std::string id;      // unique within a search; for replay, the file name
  std::string origin;  // policy that made it: "tune", "replay", "cli"
  // Exactly one way of changing the code, or only knobs:
  std::optional<std::string> definition;  // new text for the target's definition (helpers may precede it)
  std::optional<std::string> diff;        // unified diff against the repository root
  std::map<std::string, std::string> knobs;  // knob name -> value, applied by the harness
  std::string note;    // free text for reports (e.g. "neighbour of LANES=4")
};

inline nlohmann::json to_json(const Candidate& c) {
  nlohmann::json j{{"id", c.id}, {"origin", c.origin}, {"knobs", c.knobs}};
  if (c.definition) j["definition"] = *c.definition;
  if (c.diff) j["diff"] = *c.diff;
  if (!c.note.empty()) j["note"] = c.note;
  return j;
}

}  // namespace maxcode
