// Unified diffs: reading the files a diff touches, applying one to in-memory files,
// and writing the patch a user applies with `git apply`.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "runner/util/error.h"

namespace maxcode {

class PatchError : public Error {
 public:
  using Error::Error;
};

struct DiffFile {
  std::string old_path;  // empty for a new file
  std::string new_path;  // empty for a deleted file
};

// A diff(1)-style unified diff ("--- a/x" / "+++ b/x" without "diff --git" lines)
// rewritten with git headers; a git diff comes back unchanged.
std::string to_git_diff(const std::string& diff);

// The files a unified diff touches (parsed by libgit2). Throws PatchError when the text
// is not a diff.
std::vector<DiffFile> files_in_diff(const std::string& diff);

// Applies `diff` to `files` (relative path -> content) with `git apply` in a scratch
// directory and returns the new contents of the files it touched. Throws PatchError
// with git's message when it does not apply.
std::map<std::string, std::string> apply_diff(const std::string& diff,
                                              const std::map<std::string, std::string>& files);

// A git-style unified diff of one file (`a/<path>` -> `b/<path>`), made by libgit2.
std::string unified_diff(const std::string& path, const std::string& before,
                         const std::string& after);

}  // namespace maxcode
