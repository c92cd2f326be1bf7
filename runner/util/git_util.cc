#include "runner/util/git_util.h"

#include <filesystem>
#include <mutex>

namespace maxcode {

void init_libgit2() {
  static std::once_flag once;
  std::call_once(once, [] { git_libgit2_init(); });
}

std::string git_error_text() {
  const git_error* e = git_error_last();
  return e && e->message ? e->message : "unknown libgit2 error";
}

std::string git_oid_text(const git_oid* oid) {
  char text[GIT_OID_HEXSZ + 1];
  git_oid_tostr(text, sizeof text, oid);
  return text;
}

bool ignored_by_git(const std::string& dir, const std::string& relative_path) {
  init_libgit2();
  GitRepository repo;
  if (git_repository_open_ext(repo.out(), dir.c_str(), 0, nullptr) != 0) return false;
  const char* workdir = git_repository_workdir(repo.get());
  if (!workdir) return false;  // a bare repository has no work tree to ignore files in
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path inside =
      fs::weakly_canonical(fs::path(dir) / relative_path, ec).lexically_relative(fs::weakly_canonical(workdir, ec));
  if (ec || inside.empty() || *inside.begin() == "..") return false;
  int ignored = 0;
  if (git_ignore_path_is_ignored(&ignored, repo.get(), inside.generic_string().c_str()) != 0) return false;
  return ignored == 1;
}

}  // namespace maxcode
