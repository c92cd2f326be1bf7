// One ref-safe path component (branch names, directory names).
#pragma once

#include <string>

namespace maxcode {

// Characters other than [A-Za-z0-9_] become '-', runs collapse, no '-' at the ends, at
// most 80 bytes, never empty: "src/histogram.cpp" -> "src-histogram-cpp". Dots go too,
// so no "..", ".lock" or leading "." can make an invalid git ref.
std::string ref_slug(const std::string& text);

}  // namespace maxcode
