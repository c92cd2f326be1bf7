// Workspaces: where candidates are built and run, never in the user's repository.
//
// The user's repository is read once into a snapshot (a private copy). In a git
// repository the snapshot holds the tracked and untracked-but-not-ignored files as they
// are in the working tree (read through libgit2), so build outputs and ignored junk
// stay behind and uncommitted edits are included. Elsewhere it is a plain copy minus
// configured top-level excludes. Each candidate then gets its own copy of the snapshot.
//
// The snapshot's manifest (a hash per file) lets the evaluator prove that a candidate's
// build, tests and benchmarks changed no source file: a candidate that edits its tests
// at run time is caught even where no sandbox could stop the write.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "runner/util/error.h"

namespace maxcode {

class WorkspaceError : public Error {
 public:
  using Error::Error;
};

struct SourceSnapshot {
  std::filesystem::path repo;      // the user's repository (read, never written)
  std::filesystem::path root;      // the private copy
  bool git = false;                // read through libgit2
  std::string commit;              // HEAD commit when git, else empty
  std::string git_prefix;          // repo's path inside the git work tree ("" at the top)
  std::vector<std::string> local_changes;  // files differing from HEAD (git only)
  std::map<std::string, std::string> manifest;  // relative path -> SHA-256
};

// Reads `repo` into `destination` (created). Throws WorkspaceError.
SourceSnapshot capture_source(const std::filesystem::path& repo,
                              const std::filesystem::path& destination,
                              const std::vector<std::string>& exclude_top_level);

// A fresh copy of the snapshot at `destination`, with `overrides` (relative path ->
// content) written over it.
void create_workspace(const SourceSnapshot& source, const std::filesystem::path& destination,
                      const std::map<std::string, std::string>& overrides = {});

// Source files of the snapshot that are modified or missing in `workspace`, or whose
// kind (file or link) or permissions differ from the snapshot's; files in `overrides`
// are expected to hold their override content instead. Sorted.
std::vector<std::string> tampered_files(const SourceSnapshot& source,
                                        const std::filesystem::path& workspace,
                                        const std::map<std::string, std::string>& overrides);

// Removes a workspace; never throws (a leftover directory is not worth a failed run).
void remove_workspace(const std::filesystem::path& workspace) noexcept;

}  // namespace maxcode
