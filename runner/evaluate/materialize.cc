// Step 1 of an evaluation: a candidate (definition, diff or knob settings) turned into
// file contents, checked against the scope rule before anything is built.
#include "runner/evaluate/evaluator.h"

#include <algorithm>

#include "runner/util/files.h"
#include "runner/workspace/normalize.h"
#include "runner/workspace/patch.h"
#include "runner/workspace/placement.h"
#include "runner/workspace/scope.h"
#include "runner/workspace/unchanged_text.h"

namespace maxcode {

namespace fs = std::filesystem;

Materialized Evaluator::materialize(const Candidate& candidate) const {
  Materialized m;
  m.candidate = candidate;
  std::string file = ctx_.original_file;
  if (candidate.error) {
    m.rejection = *candidate.error;
    return m;
  }
  try {
    if (candidate.definition && candidate.diff) {
      m.rejection = "candidate gives both a definition and a diff";
      return m;
    }
    if (candidate.definition) {
      // What the file already holds unchanged is taken out first: a reply of the whole
      // file brings the unit's new code among copies of its neighbours (unchanged_text.h).
      std::vector<std::string> unit_names;
      for (const UnitFunction& f : ctx_.unit.functions) unit_names.push_back(f.base_name);
      const std::string code = drop_unchanged(ctx_.original_file, *candidate.definition, unit_names);
      // Each redefinition of a unit function replaces it where it stands (placement.h).
      Placement placed = place_definitions(ctx_.original_file, ctx_.unit, code);
      if (!placed.error.empty()) {
        m.rejection = ctx_.target.file + ": " + placed.error;
        return m;
      }
      file = std::move(placed.text);
      m.code = code;
    } else if (candidate.diff) {
      std::map<std::string, std::string> originals;
      for (const auto& touched : files_in_diff(*candidate.diff)) {
        for (std::string path : {touched.old_path, touched.new_path}) {
          if (path.empty()) continue;
          // Diffs made from the top of an enclosing git work tree carry its prefix.
          if (!ctx_.source.git_prefix.empty() && path.rfind(ctx_.source.git_prefix, 0) == 0)
            path = path.substr(ctx_.source.git_prefix.size());
          if (path != ctx_.target.file) {
            m.rejection = "candidate changes " + path + "; only " + ctx_.target.file +
                          " (the functions of the target's unit and new helpers beside them) may change";
            return m;
          }
        }
        if (touched.new_path.empty()) {
          m.rejection = "candidate deletes " + ctx_.target.file;
          return m;
        }
      }
      std::string diff = *candidate.diff;
      // Re-root a prefixed diff onto the snapshot's paths.
      if (!ctx_.source.git_prefix.empty()) {
        std::string prefixed_a = "a/" + ctx_.source.git_prefix, prefixed_b = "b/" + ctx_.source.git_prefix;
        for (const auto& [from, to] :
             {std::pair{prefixed_a, std::string("a/")}, std::pair{prefixed_b, std::string("b/")},
              std::pair{" " + ctx_.source.git_prefix, std::string(" ")}}) {
          for (std::size_t at = diff.find(from); at != std::string::npos; at = diff.find(from, at))
            diff.replace(at, from.size(), to);
        }
      }
      auto applied = apply_diff(diff, {{ctx_.target.file, ctx_.original_file}});
      file = applied.at(ctx_.target.file);
      m.code = *candidate.diff;
    }
    std::vector<KnobLine> knob_lines;
    for (const Knob& knob : knobs_) knob_lines.push_back({knob.name, knob.values});
    const ScopeVerdict scope = check_unit_file(ctx_.original_file, file, ctx_.unit, ctx_.target.file, knob_lines);
    if (!scope.ok) {
      m.rejection = scope.reason;
      return m;
    }
    for (const auto& [name, value] : candidate.knobs) {
      auto knob = std::find_if(knobs_.begin(), knobs_.end(), [&](const Knob& k) { return k.name == name; });
      if (knob == knobs_.end()) {
        m.rejection = "unknown knob '" + name + "'";
        return m;
      }
      if (std::find(knob->values.begin(), knob->values.end(), value) == knob->values.end()) {
        m.rejection = "knob " + name + "=" + value + " is not one of its declared values";
        return m;
      }
      if (m.code.empty() || m.code.rfind("knobs:", 0) == 0)
        m.code = (m.code.empty() ? "knobs:" : m.code) + " " + name + "=" + value;
    }
    m.files[ctx_.target.file] = file;
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
