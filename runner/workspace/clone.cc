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

struct RepoPtr {
  git_repository* p = nullptr;
  ~RepoPtr() { if (p) git_repository_free(p); }
};
struct ObjectPtr {
  git_object* p = nullptr;
  ~ObjectPtr() { if (p) git_object_free(p); }
};

std::string oid_text(const git_oid* oid) {
  char text[GIT_OID_HEXSZ + 1];
  git_oid_tostr(text, sizeof text, oid);
  return text;
}

std::string remote_branches(git_repository* repo) {
  git_branch_iterator* it = nullptr;
  std::string names;
  if (git_branch_iterator_new(&it, repo, GIT_BRANCH_REMOTE) != 0) return names;
  git_reference* ref = nullptr;
  git_branch_t type;
  int count = 0;
  while (git_branch_next(&ref, &type, it) == 0) {
    const char* name = nullptr;
    if (git_branch_name(&name, ref) == 0 && name) {
      std::string n = name;
      if (n.rfind("origin/", 0) == 0) n = n.substr(7);
      if (n != "HEAD" && count++ < 10) names += (names.empty() ? "" : ", ") + n;
    }
    git_reference_free(ref);
  }
  git_branch_iterator_free(it);
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
void clone_repository(const CloneRequest& r, const std::string& shown, RepoPtr& repo) {
  Payload payload{&r};
  git_clone_options options = GIT_CLONE_OPTIONS_INIT;
  options.fetch_opts.callbacks.credentials = credentials;
  options.fetch_opts.callbacks.payload = &payload;
  options.checkout_opts.checkout_strategy = GIT_CHECKOUT_NONE;  // checked out at the ref below
  if (git_clone(&repo.p, r.url.c_str(), r.destination.string().c_str(), &options) == 0) return;
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
void resolve_ref(const CloneRequest& r, git_repository* repo, ObjectPtr& target, std::string& resolved) {
  if (r.ref.empty()) {
    git_reference* head = nullptr;
    if (git_repository_head(&head, repo) == 0) {
      resolved = git_reference_name(head);
      git_reference_peel(&target.p, head, GIT_OBJECT_COMMIT);
      git_reference_free(head);
    }
    return;
  }
  for (const std::string& name : {"refs/remotes/origin/" + r.ref, "refs/tags/" + r.ref, r.ref}) {
    if (git_revparse_single(&target.p, repo, (name + "^{commit}").c_str()) == 0) {
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
  RepoPtr repo;
  clone_repository(r, shown, repo);
  ObjectPtr target;
  std::string resolved;
  resolve_ref(r, repo.p, target, resolved);
  if (!target.p) {
    const std::string branches = remote_branches(repo.p);
    std::error_code ignored;
    git_repository_free(repo.p);
    repo.p = nullptr;
    fs::remove_all(r.destination, ignored);
    throw CloneError(CloneError::Kind::kMissingRef,
                     r.ref.empty() ? "cannot clone " + shown + ": the repository has no commits"
                                   : "ref '" + r.ref + "' does not exist in " + shown +
                                         (branches.empty() ? "" : " (branches: " + branches + ")"));
  }
  git_checkout_options checkout = GIT_CHECKOUT_OPTIONS_INIT;
  checkout.checkout_strategy = GIT_CHECKOUT_FORCE;
  if (git_checkout_tree(repo.p, target.p, &checkout) != 0 ||
      git_repository_set_head_detached(repo.p, git_object_id(target.p)) != 0)
    throw CloneError(CloneError::Kind::kOther, "cannot check out " + r.ref + " of " + shown + ": " + git_error_text());
  return {r.destination, oid_text(git_object_id(target.p)), resolved.empty() ? oid_text(git_object_id(target.p)) : resolved};
}

std::string head_commit(const fs::path& dir) {
  init_libgit2();
  RepoPtr repo;
  if (git_repository_open(&repo.p, dir.string().c_str()) != 0) return "";
  git_oid oid;
  return git_reference_name_to_id(&oid, repo.p, "HEAD") == 0 ? oid_text(&oid) : "";
}

std::vector<std::string> commits_between(const fs::path& repo_dir, const std::string& from, const std::string& to,
                                         int limit) {
  init_libgit2();
  std::vector<std::string> out;
  RepoPtr repo;
  if (from.empty() || to.empty() || git_repository_open(&repo.p, repo_dir.string().c_str()) != 0) return out;
  git_oid from_oid, to_oid;
  if (git_oid_fromstr(&from_oid, from.c_str()) != 0 || git_oid_fromstr(&to_oid, to.c_str()) != 0) return out;
  git_revwalk* walk = nullptr;
  if (git_revwalk_new(&walk, repo.p) != 0) return out;
  git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME);
  if (git_revwalk_push(walk, &to_oid) == 0 && git_revwalk_hide(walk, &from_oid) == 0) {
    git_oid oid;
    while (static_cast<int>(out.size()) < limit && git_revwalk_next(&oid, walk) == 0) {
      git_commit* commit = nullptr;
      if (git_commit_lookup(&commit, repo.p, &oid) != 0) continue;
      const char* summary = git_commit_summary(commit);
      out.push_back(oid_text(&oid).substr(0, 10) + " " + (summary ? summary : ""));
      git_commit_free(commit);
    }
  }
  git_revwalk_free(walk);
  return out;
}

}  // namespace maxcode
