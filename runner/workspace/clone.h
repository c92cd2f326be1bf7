// Cloning the repository a job works on, with libgit2: https:// and http:// (a token
// from the environment as basic-auth password, user `x-access-token`, the way GitHub
// takes it), ssh:// and git@host:path (libssh2: the ssh-agent, or a key file),
// file:// and local paths. The clone is checked out, detached, at the ref.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "runner/util/error.h"

namespace maxcode {

// Why a clone failed, so that a caller can tell a user's mistake from a network one.
class CloneError : public Error {
 public:
  enum class Kind { kUnreachable, kAuth, kMissingRef, kOther };
  CloneError(Kind kind, const std::string& message) : Error(message), kind(kind) {}
  Kind kind;
};
const char* clone_error_kind_name(CloneError::Kind kind);

struct CloneRequest {
  std::string url;                   // URL or local path
  std::string ref;                   // branch, tag or commit; empty: the remote's HEAD
  std::filesystem::path destination; // must not exist, or be empty
  std::string token;                 // HTTPS password; empty: none
  std::filesystem::path ssh_key;     // private key file for ssh; empty: the ssh-agent
};

struct Checkout {
  std::filesystem::path dir;
  std::string commit;  // full sha of the checked-out commit
  std::string ref;     // as resolved: "refs/heads/main", "refs/tags/v1", or the sha
};

// Throws CloneError; the message names the URL (never the token) and, for a missing
// ref, the branches the remote has.
Checkout clone_at_ref(const CloneRequest& request);

// Commits reachable from `to` but not from `from` in the repository at `repo`, newest
// first, as "<short sha> <subject>". Empty when either is unknown there.
std::vector<std::string> commits_between(const std::filesystem::path& repo, const std::string& from,
                                         const std::string& to, int limit = 50);

// The sha HEAD points to in the repository at `dir`; empty when there is none.
std::string head_commit(const std::filesystem::path& dir);

// "https://x:secret@host/r.git" -> "https://host/r.git": URLs as they may be printed.
std::string url_without_credentials(const std::string& url);

}  // namespace maxcode
