#include "runner/util/git_util.h"

#include <git2.h>

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

}  // namespace maxcode
