#include "runner/evaluate/materialize.h"

#include <algorithm>

#include "runner/util/files.h"
#include "runner/workspace/normalize.h"
#include "runner/workspace/patch.h"
#include "runner/workspace/placement.h"
#include "runner/workspace/scope.h"
#include "runner/workspace/unchanged_text.h"

namespace maxcode {

std::optional<std::string> Materializer::with_definition(const std::string& definition, Materialized& m) const {
  // What the file already holds unchanged is taken out first: a reply of the whole file
  // brings the unit's new code among copies of its neighbours (unchanged_text.h).
  std::vector<std::string> unit_names;
  for (const UnitFunction& f : ctx_.unit.functions) unit_names.push_back(f.base_name);
  const std::string code = drop_unchanged(ctx_.original_file, definition, unit_names);
  // Each redefinition of a unit function replaces it where it stands (placement.h).
  Placement placed = place_definitions(ctx_.original_file, ctx_.unit, code);
  if (!placed.error.empty()) {
    m.rejection = ctx_.target.file + ": " + placed.error;
    return std::nullopt;
  }
  m.code = code;
  return std::move(placed.text);
}

std::optional<std::string> Materializer::with_diff(const std::string& candidate_diff, Materialized& m) const {
  const std::string& target = ctx_.target.file;
  const std::string& prefix = ctx_.source.git_prefix;
  for (const auto& touched : files_in_diff(candidate_diff)) {
    for (std::string path : {touched.old_path, touched.new_path}) {
      if (path.empty()) continue;
      // Diffs made from the top of an enclosing git work tree carry its prefix.
      if (!prefix.empty() && path.rfind(prefix, 0) == 0) path = path.substr(prefix.size());
      if (path != target) {
        m.rejection = "candidate changes " + path + "; only " + target +
                      " (the functions of the target's unit and new helpers beside them) may change";
        return std::nullopt;
      }
    }
    if (touched.new_path.empty()) {
      m.rejection = "candidate deletes " + target;
      return std::nullopt;
    }
  }
  std::string diff = candidate_diff;
  // Re-root a prefixed diff onto the snapshot's paths.
  if (!prefix.empty()) {
    for (const auto& [from, to] :
         {std::pair{"a/" + prefix, std::string("a/")}, std::pair{"b/" + prefix, std::string("b/")},
          std::pair{" " + prefix, std::string(" ")}}) {
      for (std::size_t at = diff.find(from); at != std::string::npos; at = diff.find(from, at))
        diff.replace(at, from.size(), to);
    }
  }
  std::string file = apply_diff(diff, {{target, ctx_.original_file}}).at(target);
  m.code = candidate_diff;
  return file;
}

std::string Materializer::check_knobs(const Candidate& candidate, Materialized& m) const {
  for (const auto& [name, value] : candidate.knobs) {
    auto knob = std::find_if(knobs_.begin(), knobs_.end(), [&](const Knob& k) { return k.name == name; });
    if (knob == knobs_.end()) return "unknown knob '" + name + "'";
    if (std::find(knob->values.begin(), knob->values.end(), value) == knob->values.end())
      return "knob " + name + "=" + value + " is not one of its declared values";
    if (m.code.empty() || m.code.rfind("knobs:", 0) == 0)
      m.code = (m.code.empty() ? "knobs:" : m.code) + " " + name + "=" + value;
  }
  return "";
}

Materialized Materializer::materialize(const Candidate& candidate) const {
  Materialized m;
  m.candidate = candidate;
  if (candidate.error) {
    m.rejection = *candidate.error;
    return m;
  }
  try {
    if (candidate.definition && candidate.diff) {
      m.rejection = "candidate gives both a definition and a diff";
      return m;
    }
    std::optional<std::string> file = ctx_.original_file;
    if (candidate.definition)
      file = with_definition(*candidate.definition, m);
    else if (candidate.diff)
      file = with_diff(*candidate.diff, m);
    if (!file) return m;
    std::vector<KnobLine> knob_lines;
    for (const Knob& knob : knobs_) knob_lines.push_back({knob.name, knob.values});
    const ScopeVerdict scope = check_unit_file(ctx_.original_file, *file, ctx_.unit, ctx_.target.file, knob_lines);
    if (!scope.ok) {
      m.rejection = scope.reason;
      return m;
    }
    if (m.rejection = check_knobs(candidate, m); !m.rejection.empty()) return m;
    m.files[ctx_.target.file] = *file;
    for (const Knob& knob : knobs_) {  // knobs may live in other files (config)
      if (!candidate.knobs.count(knob.name)) continue;
      auto it = m.files.find(knob.file);
      const std::string before = it != m.files.end() ? it->second : read_text(ctx_.source.root / knob.file);
      m.files[knob.file] = apply_knobs(before, knob.file, knobs_, candidate.knobs);
    }
  } catch (const std::exception& e) {
    m.rejection = e.what();
    return m;
  }
  // Comments and layout do not make a different candidate.
  std::string all;
  for (const auto& [path, content] : m.files) all += path + '\0' + normalize_code(content) + '\0';
  m.source_hash = sha256_hex(all);
  return m;
}

}  // namespace maxcode
