// Normalizing C/C++/CUDA source for comparison: two candidates that differ only in
// comments and whitespace are the same candidate, and must not be built or timed twice.
#pragma once

#include <string>
#include <string_view>

namespace maxcode {

// Comments removed; every run of whitespace outside string and character literals
// becomes one space, and none is kept where it cannot matter (next to punctuation).
// Preprocessor lines keep their line breaks, which end them.
std::string normalize_code(std::string_view code);

}  // namespace maxcode
