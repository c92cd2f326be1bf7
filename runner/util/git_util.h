// libgit2 plumbing shared by the engine's git users (workspace snapshots, diffs).
#pragma once

#include <string>

namespace maxcode {

// git_libgit2_init, once per process, thread-safe.
void init_libgit2();

// The message of libgit2's last error on this thread.
std::string git_error_text();

// Whether git's ignore rules (.gitignore files, info/exclude, core.excludesFile) match
// `relative_path` in the work tree at or above `dir`; false outside a repository.
bool ignored_by_git(const std::string& dir, const std::string& relative_path);

}  // namespace maxcode
