// Where a candidate's code goes in the target's file. A candidate answers with code: new
// definitions of functions of the target's unit, and new helpers (functions, types,
// constants, #include lines). Each definition of a unit function replaces that function's
// definition where it stands, so a kernel rewritten in place keeps its place before its
// launcher and the file never holds two definitions of one function ("redefinition of",
// "has already been defined"). Everything else goes right before the first of the unit's
// functions that the candidate redefines, so that every redefined function sees it.
#pragma once

#include <string>
#include <string_view>

#include "runner/workspace/unit.h"

namespace maxcode {

struct Placement {
  std::string text;   // the file with the candidate's code in place
  std::string error;  // why the code cannot be placed (then nothing is built); empty if placed
};

// `code` placed into `original` (the unit's file). A definition is a unit function's
// when its name is the function's and, where the unit has several of that name
// (overloads), its signature is one of theirs. Errors: the code defines none of the
// unit's functions, or one of them twice.
Placement place_definitions(std::string_view original, const Unit& unit, std::string_view code);

}  // namespace maxcode
