// Where profiled code comes from: the repository (inside or outside the configured
// scope) or a library (the C and C++ runtimes, CUDA libraries, CUTLASS, ...). Library
// code is shown but marked external, and never becomes a target.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "runner/core/config.h"

namespace maxcode {

class CodeOrigin {
 public:
  // `roots`: where the repository's files are, as recorded paths name them (the
  // workspace it was built in, the repository itself). The first is the one reported.
  CodeOrigin(std::vector<std::filesystem::path> roots, ScopeConfig scope);

  // `file` relative to the root holding it, with '/' separators; "" when none does.
  std::string relative(const std::string& file) const;
  bool in_repository(const std::string& file) const { return !relative(file).empty(); }
  // A repository-relative file the scope includes (and does not exclude).
  bool in_scope(const std::string& relative_file) const;

  // Library code, judged by what is known of it: its source file (outside the
  // repository, or in a vendored library's folder), else the object it is in, and
  // its name (std::, cutlass::, cub::, thrust::, ...).
  bool external(const std::string& function, const std::string& file, const std::string& module) const;

  // The roots as given (absolute, normalized), then their symlink-free spellings.
  const std::vector<std::filesystem::path>& roots() const { return roots_; }

 private:
  std::vector<std::filesystem::path> roots_;
  ScopeConfig scope_;
};

// Names of library code, whatever file they were compiled from.
bool is_library_function(const std::string& function);

}  // namespace maxcode
