// libgit2 plumbing shared by the engine's git users (workspace snapshots, diffs).
#pragma once

#include <git2.h>

#include <string>

namespace maxcode {

// git_libgit2_init, once per process, thread-safe.
void init_libgit2();

// The message of libgit2's last error on this thread.
std::string git_error_text();

// A commit id as its 40 hex digits.
std::string git_oid_text(const git_oid* oid);

// A libgit2 object, freed with its own function when it goes out of scope (also when
// the code between throws): `GitOwned<git_commit, git_commit_free> c;
// git_commit_lookup(c.out(), repo, &oid)`.
template <class T, void (*Free)(T*)>
class GitOwned {
 public:
  GitOwned() = default;
  GitOwned(const GitOwned&) = delete;
  GitOwned& operator=(const GitOwned&) = delete;
  ~GitOwned() { reset(); }

  T** out() {  // for libgit2's out-parameter; frees what was held
    reset();
    return &ptr_;
  }
  T* get() const { return ptr_; }
  explicit operator bool() const { return ptr_ != nullptr; }
  void reset() {
    if (ptr_) Free(ptr_);
    ptr_ = nullptr;
  }

 private:
  T* ptr_ = nullptr;
};
using GitRepository = GitOwned<git_repository, git_repository_free>;

// Whether git's ignore rules (.gitignore files, info/exclude, core.excludesFile) match
// `relative_path` in the work tree at or above `dir`; false outside a repository.
bool ignored_by_git(const std::string& dir, const std::string& relative_path);

}  // namespace maxcode
