// Path components safe to make from outside text: ref-safe slugs (branch names,
// directory names) and the names a runner may send for its results.
#pragma once

#include <string>

namespace maxcode {

// Characters other than [A-Za-z0-9_] become '-', runs collapse, no '-' at the ends, at
// most 80 bytes, never empty: "src/histogram.cpp" -> "src-histogram-cpp". Dots go too,
// so no "..", ".lock" or leading "." can make an invalid git ref.
std::string ref_slug(const std::string& text);

// Names a runner may use for a target directory or a file in it (the runner protocol,
// the job page): 1-200 of [A-Za-z0-9._-], not starting with '.', so never "..".
// The worker checks its own uploads by the rule the service enforces.
bool safe_result_name(const std::string& name);

}  // namespace maxcode
