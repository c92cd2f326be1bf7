// Locating the target function among the repository's source files in scope.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "runner/core/config.h"
#include "runner/workspace/source_extent.h"
#include "runner/core/target.h"

namespace maxcode {

struct Located {
  Target target;
  Extent extent;
};

// Every definition of `function` in the source files in scope that `signature` (when
// not empty) matches; none is no error here.
std::vector<Located> locate_definitions(const std::filesystem::path& root, const ScopeConfig& scope,
                                        const std::string& function, const std::string& signature = "");

// Whether `path` names a C, C++ or CUDA source or header file (by its extension).
bool is_source_file(const std::string& path);

// Searches C, C++ and CUDA files (.c .cc .cpp .cxx .h .hh .hpp .hxx .cu .cuh) under
// `root` that the scope includes. Throws SourceError when the function is defined
// nowhere, or in several places and neither `signature` nor `file` picks one. `file`
// (repository-relative) is where the profile found the hot one: two `static inline`
// functions of one name and signature in per-architecture files differ only by it.
Located locate_target(const std::filesystem::path& root, const ScopeConfig& scope,
                      const std::string& function, const std::string& signature = "",
                      const std::string& file = "");

}  // namespace maxcode
