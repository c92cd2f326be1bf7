// The scope rule: a candidate may change only the functions of the target's unit
// (unit.h) and add new helper definitions next to them in the same file. Checked on
// source text before anything is built, so a candidate that edits tests, benchmarks or
// other code never runs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "runner/workspace/source_extent.h"
#include "runner/workspace/unit.h"

namespace maxcode {

// A line the harness itself may change: a tuning knob's declaration (`#define NAME v`
// or `constexpr T NAME = v;`), whose value may become one of `values`.
struct KnobLine {
  std::string name;
  std::vector<std::string> values;
};

struct ScopeVerdict {
  bool ok = true;
  std::string reason;  // why not, naming the file and the first offending line
};

// Compares the target file before and after. Allowed: the definition of `function`
// (the one at `original_extent`) replaced by any text; new text inserted directly
// before or after it (helpers); a knob line's value changed to one of its values.
// Anything else (an edited, removed or added line elsewhere) is rejected.
ScopeVerdict check_target_file(std::string_view original, std::string_view candidate,
                               const Extent& original_extent, std::string_view function,
                               std::string_view file_label,
                               const std::vector<KnobLine>& knobs = {});

// The same for a whole unit: each unit function's definition (widened as above) may be
// replaced by any text that still defines it, and new text may stand beside each; the
// lines between them stay as they were. New text may not define a function that the
// file defines outside the unit, or that the unit calls in another file: the message
// names it and says how to add it (targets.unit.add).
ScopeVerdict check_unit_file(std::string_view original, std::string_view candidate,
                             const Unit& unit, std::string_view file_label,
                             const std::vector<KnobLine>& knobs = {});

// Returns `text` with [extent.begin, extent.end) replaced by `definition`.
std::string replace_definition(std::string_view text, const Extent& extent,
                               std::string_view definition);

}  // namespace maxcode
