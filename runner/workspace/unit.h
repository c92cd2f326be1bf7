// A target's unit: the named function plus the functions of the same file that it calls,
// directly or through them — kernels it launches, __device__ functions, static helpers,
// templates. A candidate may redefine any of them in place (placement.h), so that a
// kernel is rewritten together with its launcher instead of copied under a new name.
//
// Found from the source with the token scanner of source_extent.h: a name followed by
// `(`, `<<<` or template arguments and one of those is a call; a name of the file that
// stands where a value does (`&fn`, an argument) has its address taken and joins the
// unit too. What the scanner cannot follow is kept as notes for the user: calls through
// pointers, and callees defined in other files (a unit stays in one file).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "runner/core/config.h"
#include "runner/workspace/locate.h"
#include "runner/workspace/source_extent.h"

namespace maxcode {

struct UnitFunction {
  std::string name;       // as the definition writes it (qualified where it is: Cls::fn)
  std::string base_name;  // its last part (fn)
  Extent extent;
  std::string why;   // "the target", "called by launch", "launched by launch", ...
};

// A function the unit calls that another file defines: candidates may not change it.
struct OutsideCallee {
  std::string name;
  std::string where;  // "src/b.cc:12"
};

struct Unit {
  std::string file;
  std::vector<UnitFunction> functions;  // the target first, then the others in file order
  std::vector<std::string> notes;       // what the unit leaves out or could not follow
  std::vector<OutsideCallee> elsewhere;

  // The names of `functions`, in that order.
  std::vector<std::string> names() const;
};

// The unit of the definition at `target` in `text` (the file `file`). Names in
// `config.add` join the unit with what they call; names in `config.leave_out` are never
// entered. Throws SourceError naming the field when a listed name is not defined in
// `text`, or when the target itself is left out.
Unit find_unit(std::string_view text, const std::string& file, const Extent& target,
               const UnitConfig& config);

// find_unit on the located target's file, then a look through the other source files
// in scope: a callee or a listed name that one of them defines gets a note saying so
// (a listed one is an error: a unit may not span files).
Unit find_unit(const std::filesystem::path& root, const ScopeConfig& scope,
               const Located& located, const UnitConfig& config);

// The unit's definitions as they stand in `text`, in file order, separated by a blank
// line: what a prompt shows as the original.
std::string unit_text(std::string_view text, const Unit& unit);

}  // namespace maxcode
