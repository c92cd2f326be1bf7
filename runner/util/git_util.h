// libgit2 plumbing shared by the engine's git users (workspace snapshots, diffs).
#pragma once

#include <string>

namespace maxcode {

// git_libgit2_init, once per process, thread-safe.
void init_libgit2();

// The message of libgit2's last error on this thread.
std::string git_error_text();

}  // namespace maxcode
