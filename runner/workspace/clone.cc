#include "runner/workspace/clone.h"

#include <git2.h>

#include <memory>

#include "runner/util/git_util.h"
#include "runner/util/json_io.h"

namespace maxcode {

namespace fs = std::filesystem;

namespace {

struct Payload {
  const CloneRequest* request;
  int calls = 0;
  bool asked = false;
};

int credentials(git_credential** out, const char* url, const char* user_from_url, unsigned int allowed,
                void* data) {
  auto& p = *static_cast<Payload*>(data);
  p.asked = true;
  // libgit2 asks again after a refusal: the credentials are wrong, expired or lack access.
  if (++p.calls > 1) {
    git_error_set_str(GIT_ERROR_NET, (std::string("the git server at ") + url_without_credentials(url) +
                                      " refused the credentials").c_str());
    return GIT_EAUTH;
  }
  if (allowed & GIT_CREDENTIAL_SSH_KEY) {
    const char* user = user_from_url && *user_from_url ? user_from_url : "git";
    if (p.request->ssh_key.empty()) return git_credential_ssh_key_from_agent(out, user);
    const std::string key = p.request->ssh_key.string();
    const std::string pub = key + ".pub";
    return git_credential_ssh_key_new(out, user, fs::exists(pub) ? pub.c_str() : nullptr, key.c_str(), nullptr);
  }
  if (allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) {
    if (p.request->token.empty()) {
      git_error_set_str(GIT_ERROR_NET, (std::string("the git server at ") + url_without_credentials(url) +
                                        " asks for credentials and no token was given").c_str());
      return GIT_EAUTH;
    }
    return git_credential_userpass_plaintext_new(out, "x-access-token", p.request->token.c_str());
  }
  return GIT_PASSTHROUGH;
}

using GitObject = GitOwned<git_object, git_object_free>;
using GitReference = GitOwned<git_reference, git_reference_free>;

std::string remote_branches(git_repository* repo) {
  GitOwned<git_branch_iterator, git_branch_iterator_free> it;
  std::string names;
  if (git_branch_iterator_new(it.out(), repo, GIT_BRANCH_REMOTE) != 0) return names;
  GitReference ref;
  git_branch_t type;
  int count = 0;
  while (git_branch_next(ref.out(), &type, it.get()) == 0) {
    const char* name = nullptr;
    if (git_branch_name(&name, ref.get()) == 0 && name) {
      std::string n = name;
      if (n.rfind("origin/", 0) == 0) n = n.substr(7);
      if (n != "HEAD" && count++ < 10) names += (names.empty() ? "" : ", ") + n;
    }
  }
  return names;
}

}  // namespace

const char* clone_error_kind_name(CloneError::Kind kind) {
  switch (kind) {
    case CloneError::Kind::kUnreachable: return "unreachable";
    case CloneError::Kind::kAuth: return "auth";
    case CloneError::Kind::kMissingRef: return "missing-ref";
    case CloneError::Kind::kOther: return "other";
  }
  return "other";
}

std::string url_without_credentials(const std::string& url) {
  const auto scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  const auto host_end = url.find('/', scheme + 3);
  const auto at = url.rfind('@', host_end);
  if (at == std::string::npos || at < scheme) return url;
  return url.substr(0, scheme + 3) + url.substr(at + 1);
}

namespace {

// libgit2's clone without a checkout; a failure removes the destination and is named
// as unreachable or as refused credentials, the token never in the text.
void clone_repository(const CloneRequest& r, const std::string& shown, GitRepository& repo) {
  Payload payload{&r};
  git_clone_options options = GIT_CLONE_OPTIONS_INIT;
  options.fetch_opts.callbacks.credentials = credentials;
  options.fetch_opts.callbacks.payload = &payload;
  options.checkout_opts.checkout_strategy = GIT_CHECKOUT_NONE;  // checked out at the ref below
  if (git_clone(repo.out(), r.url.c_str(), r.destination.string().c_str(), &options) == 0) return;
  const git_error* e = git_error_last();
  std::string text = git_error_text();
  // The token may appear in nothing libgit2 says, but be sure.
  if (!r.token.empty())
    for (auto pos = text.find(r.token); pos != std::string::npos; pos = text.find(r.token))
      text.replace(pos, r.token.size(), "***");
  const bool auth = (e && e->klass == GIT_ERROR_HTTP && text.find("401") != std::string::npos) ||
                    text.find("credentials") != std::string::npos || text.find("authentication") != std::string::npos;
  std::error_code ignored;
  fs::remove_all(r.destination, ignored);
  throw CloneError(auth ? CloneError::Kind::kAuth : CloneError::Kind::kUnreachable,
                   "cannot clone " + excerpt(shown, 200) + ": " + text);
}

// The ref's commit: a branch of the remote, a tag, or a commit (full or abbreviated
// sha); none given, the remote's HEAD. `resolved` is the ref's full name, when it has
// one. Null when there is no such commit.
void resolve_ref(const CloneRequest& r, git_repository* repo, GitObject& target, std::string& resolved) {
  if (r.ref.empty()) {
    GitReference head;
    if (git_repository_head(head.out(), repo) == 0) {
      resolved = git_reference_name(head.get());
      git_reference_peel(target.out(), head.get(), GIT_OBJECT_COMMIT);
    }
    return;
  }
  for (const std::string& name : {"refs/remotes/origin/" + r.ref, "refs/tags/" + r.ref, r.ref}) {
    if (git_revparse_single(target.out(), repo, (name + "^{commit}").c_str()) == 0) {
      resolved = name.rfind("refs/remotes/origin/", 0) == 0 ? "refs/heads/" + r.ref : name;
      return;
    }
  }
}

}  // namespace

Checkout clone_at_ref(const CloneRequest& r) {
  init_libgit2();
  const std::string shown = url_without_credentials(r.url);
  std::error_code ec;
  if (fs::exists(r.destination, ec) && !fs::is_empty(r.destination, ec))
    throw CloneError(CloneError::Kind::kOther, r.destination.string() + ": exists and is not empty");
  // A local path that does not exist would otherwise read as a network failure. (Any
  // name can come here from a job document: one too long for the file system is an
  // error of its own, not a filesystem_error that ends the process.)
  const bool looks_local = r.url.find("://") == std::string::npos && r.url.find('@') == std::string::npos;
  if (looks_local && !fs::exists(r.url, ec))
    throw CloneError(CloneError::Kind::kUnreachable,
                     "cannot clone " + excerpt(shown, 200) + ": " + (ec ? ec.message() : "no such directory"));
  GitRepository repo;
  clone_repository(r, shown, repo);
  GitObject target;
  std::string resolved;
  resolve_ref(r, repo.get(), target, resolved);
  if (!target) {
    const std::string branches = remote_branches(repo.get());
    std::error_code ignored;
    repo.reset();  // closed before its directory is removed
    fs::remove_all(r.destination, ignored);
    throw CloneError(CloneError::Kind::kMissingRef,
                     r.ref.empty() ? "cannot clone " + shown + ": the repository has no commits"
                                   : "ref '" + r.ref + "' does not exist in " + shown +
                                         (branches.empty() ? "" : " (branches: " + branches + ")"));
  }
  git_checkout_options checkout = GIT_CHECKOUT_OPTIONS_INIT;
  checkout.checkout_strategy = GIT_CHECKOUT_FORCE;
  if (git_checkout_tree(repo.get(), target.get(), &checkout) != 0 ||
      git_repository_set_head_detached(repo.get(), git_object_id(target.get())) != 0)
    throw CloneError(CloneError::Kind::kOther, "cannot check out " + r.ref + " of " + shown + ": " + git_error_text());
  return {r.destination, git_oid_text(git_object_id(target.get())),
          resolved.empty() ? git_oid_text(git_object_id(target.get())) : resolved};
}

std::string head_commit(const fs::path& dir) {
  init_libgit2();
  GitRepository repo;
  if (git_repository_open(repo.out(), dir.string().c_str()) != 0) return "";
  git_oid oid;
  return git_reference_name_to_id(&oid, repo.get(), "HEAD") == 0 ? git_oid_text(&oid) : "";
}

std::vector<std::string> commits_between(const fs::path& repo_dir, const std::string& from, const std::string& to,
                                         int limit) {
  init_libgit2();
  std::vector<std::string> out;
  GitRepository repo;
  if (from.empty() || to.empty() || git_repository_open(repo.out(), repo_dir.string().c_str()) != 0) return out;
  git_oid from_oid, to_oid;
  if (git_oid_fromstr(&from_oid, from.c_str()) != 0 || git_oid_fromstr(&to_oid, to.c_str()) != 0) return out;
  GitOwned<git_revwalk, git_revwalk_free> walk;
  if (git_revwalk_new(walk.out(), repo.get()) != 0) return out;
  git_revwalk_sorting(walk.get(), GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME);
  if (git_revwalk_push(walk.get(), &to_oid) == 0 && git_revwalk_hide(walk.get(), &from_oid) == 0) {
    git_oid oid;
    while (static_cast<int>(out.size()) < limit && git_revwalk_next(&oid, walk.get()) == 0) {
      GitOwned<git_commit, git_commit_free> commit;
      if (git_commit_lookup(commit.out(), repo.get(), &oid) != 0) continue;
      const char* summary = git_commit_summary(commit.get());
      out.push_back(git_oid_text(&oid).substr(0, 10) + " " + (summary ? summary : ""));
    }
  }
  return out;
}

}  // namespace maxcode
