// The deterministic branch of a target: maxcode/<path-slug>/<function>. The same
// target always maps to the same branch, which is how a re-run finds its own PR.
#pragma once

#include <string>

namespace maxcode::bot {

// "src/histogram.cpp", "ns::histogram<int>" -> "maxcode/src-histogram-cpp/ns-histogram-int".
// Only [A-Za-z0-9_-] survive, so the result is always a valid ref name.
std::string branch_for(const std::string& file, const std::string& function);

// One ref-safe component: other characters become '-', runs collapse, no '-' at the
// ends, at most 80 bytes.
std::string slug(const std::string& text);

}  // namespace maxcode::bot
