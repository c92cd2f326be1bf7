// The repository side of a delivery, through libgit2: fetch the remote into a private
// bare repository, make the maxcode commit (the patch applied to the base commit's tree,
// no checkout needed), look at who wrote the commits on a branch, and push.
//
// Authentication is HTTP basic with user `x-access-token` and the token as password,
// which is how GitHub takes App installation tokens, GITHUB_TOKEN and personal tokens.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "runner/util/error.h"

namespace maxcode::bot {

// Always retryable: git fails here on a fetch or a push, and what stops those (the
// network, the remote's 5xx) may pass.
class GitError : public Error {
 public:
  explicit GitError(const std::string& message) : Error(message, Retryable::kYes) {}
};

struct GitIdentity {
  std::string name = "maxcode[bot]";
  std::string email = "maxcode[bot]@users.noreply.github.com";
};

struct CommitInfo {
  std::string sha;
  std::string author_name, author_email;
  std::string committer_email;
  std::string message;
};

class GitRemote {
 public:
  // Creates an empty bare repository in `dir` (which must not exist or be empty) with
  // `url` as its remote. An empty token means no credentials.
  GitRemote(std::filesystem::path dir, std::string url, std::string token);
  ~GitRemote();
  GitRemote(const GitRemote&) = delete;
  GitRemote& operator=(const GitRemote&) = delete;

  // Fetches every branch of the remote to refs/remotes/origin/*.
  void fetch();

  std::optional<std::string> remote_branch(const std::string& branch) const;
  bool has_commit(const std::string& sha) const;
  // The content of `path` at `commit`; nullopt when the file is not there.
  std::optional<std::string> read_file(const std::string& commit, const std::string& path) const;
  std::string tree_of(const std::string& commit) const;
  std::vector<std::string> parents_of(const std::string& commit) const;

  // Commits reachable from `tip` but from no other remote branch and not from `base`:
  // the commits that belong to this branch only, newest first.
  std::vector<CommitInfo> own_commits(const std::string& tip, const std::string& branch,
                                      const std::string& base) const;

  // Applies the git-style unified diff `patch` to `base`'s tree and records the result
  // as a commit with parent `base`, at time `when` (so the same inputs give the same
  // commit). Returns its sha. Throws GitError with libgit2's reason when the patch
  // does not apply.
  std::string commit_patch(const std::string& base, const std::string& patch, const GitIdentity& identity,
                           const std::string& message, std::int64_t when);

  // Pushes `sha` to refs/heads/`branch`; `force` replaces what is there. Throws
  // GitError with the server's reason when the push is refused (a protected branch, a
  // hook, no permission).
  void push(const std::string& sha, const std::string& branch, bool force);

  // `path` at `commit` in the local repository that contains `dir` (no network);
  // nullopt when there is no such repository, commit or file.
  static std::optional<std::string> read_local_file(const std::filesystem::path& dir, const std::string& commit,
                                                    const std::string& path);

  struct State;  // libgit2 handles; opaque (public for the C callbacks)

 private:
  std::unique_ptr<State> state_;
};

}  // namespace maxcode::bot
