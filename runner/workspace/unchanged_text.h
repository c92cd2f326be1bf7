// A candidate's code with what the target's file already holds, unchanged, taken out.
//
// Models often answer with the whole file (its #include lines, types, the functions
// around the target) rather than the unit alone. Placed as it stands, every unchanged
// neighbour counted as a function "outside the unit" and every repeated type as a
// redefinition, so such replies were always rejected although the unit's new code was in
// them. What is left after this is the unit's new definitions and anything new.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace maxcode {

// `code` without the top-level pieces that `file` holds unchanged (compared after
// normalize_code: comments and spacing do not matter): function definitions, types,
// variables and other declarations, namespace blocks; #include, #pragma once and
// #define lines that the file has; the include guard around the whole code when the
// file has the same; comments that the file has word for word; and a `main` when the
// file has none (a model's test harness, which would only clash with the benchmark's).
// Anything the candidate changed, however little, stays and meets the scope rule as
// before; so do definitions of `keep` (the unit's functions), changed or not: a
// candidate that is the original unchanged is evaluated as the original, not emptied.
std::string drop_unchanged(std::string_view file, std::string_view code, const std::vector<std::string>& keep = {});

}  // namespace maxcode
