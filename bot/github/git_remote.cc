#include "bot/github/git_remote.h"

#include <git2.h>

#include "runner/util/git_util.h"

namespace maxcode::bot {

namespace fs = std::filesystem;

namespace {

void check(int code, const std::string& what) {
  if (code < 0) throw GitError(what + ": " + git_error_text());
}

using Commit = GitOwned<git_commit, git_commit_free>;
using Tree = GitOwned<git_tree, git_tree_free>;
using Diff = GitOwned<git_diff, git_diff_free>;
using Index = GitOwned<git_index, git_index_free>;
using Signature = GitOwned<git_signature, git_signature_free>;
using Walk = GitOwned<git_revwalk, git_revwalk_free>;
using Blob = GitOwned<git_blob, git_blob_free>;
using TreeEntry = GitOwned<git_tree_entry, git_tree_entry_free>;
using Reference = GitOwned<git_reference, git_reference_free>;
using RefIterator = GitOwned<git_reference_iterator, git_reference_iterator_free>;

git_oid oid_of(const std::string& sha) {
  git_oid oid;
  if (sha.size() != GIT_OID_HEXSZ || git_oid_fromstr(&oid, sha.c_str()) < 0) throw GitError("not a commit id: " + sha);
  return oid;
}

}  // namespace

struct GitRemote::State {
  fs::path dir;
  std::string url, token;
  // Freed in the reverse order: the remote before its repository.
  GitRepository repo;
  GitOwned<git_remote, git_remote_free> remote;
  int credential_calls = 0;
  std::string remote_messages;  // what the server printed ("remote: ...")
  std::string rejection;        // why the server refused a ref
};

namespace {

int credentials(git_credential** out, const char* url, const char*, unsigned int allowed, void* payload) {
  auto& state = *static_cast<GitRemote::State*>(payload);
  if (state.token.empty()) {
    git_error_set_str(GIT_ERROR_NET, (std::string("the git server at ") + url + " asks for credentials and no token was given").c_str());
    return GIT_EAUTH;
  }
  if (++state.credential_calls > 1) {
    // libgit2 asks again after a refusal: the token is wrong, expired, or lacks access.
    git_error_set_str(GIT_ERROR_NET, (std::string("the git server at ") + url + " refused the token").c_str());
    return GIT_EAUTH;
  }
  if (!(allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT)) return GIT_PASSTHROUGH;
  return git_credential_userpass_plaintext_new(out, "x-access-token", state.token.c_str());
}

int sideband(const char* text, int length, void* payload) {
  static_cast<GitRemote::State*>(payload)->remote_messages.append(text, static_cast<std::size_t>(length));
  return 0;
}

int update_reference(const char* refname, const char* status, void* payload) {
  if (status) {
    auto& state = *static_cast<GitRemote::State*>(payload);
    state.rejection += std::string(refname) + ": " + status;
  }
  return 0;
}

git_remote_callbacks callbacks(GitRemote::State* state) {
  git_remote_callbacks cb = GIT_REMOTE_CALLBACKS_INIT;
  cb.credentials = credentials;
  cb.sideband_progress = sideband;
  cb.push_update_reference = update_reference;
  cb.payload = state;
  return cb;
}

// The server's own words, without git's progress lines.
std::string remote_text(const std::string& messages) {
  std::string out;
  std::size_t start = 0;
  while (start < messages.size()) {
    std::size_t end = messages.find_first_of("\r\n", start);
    if (end == std::string::npos) end = messages.size();
    const std::string line = messages.substr(start, end - start);
    if (!line.empty() && line.find("Resolving deltas") == std::string::npos &&
        line.find("Counting objects") == std::string::npos && line.find("Compressing objects") == std::string::npos)
      out += (out.empty() ? "" : " | ") + line;
    start = end + 1;
  }
  return out;
}

}  // namespace

GitRemote::GitRemote(fs::path dir, std::string url, std::string token) : state_(std::make_unique<State>()) {
  init_libgit2();
  state_->dir = std::move(dir);
  state_->url = std::move(url);
  state_->token = std::move(token);
  check(git_repository_init(state_->repo.out(), state_->dir.c_str(), /*is_bare=*/1),
        "git init " + state_->dir.string());
  check(git_remote_create(state_->remote.out(), state_->repo.get(), "origin", state_->url.c_str()),
        "git remote " + state_->url);
}

GitRemote::~GitRemote() = default;

void GitRemote::fetch() {
  git_fetch_options options = GIT_FETCH_OPTIONS_INIT;
  options.callbacks = callbacks(state_.get());
  options.prune = GIT_FETCH_PRUNE;
  state_->credential_calls = 0;
  check(git_remote_fetch(state_->remote.get(), nullptr, &options, "maxcode fetch"), "git fetch " + state_->url);
}

std::optional<std::string> GitRemote::remote_branch(const std::string& branch) const {
  git_oid oid;
  if (git_reference_name_to_id(&oid, state_->repo.get(), ("refs/remotes/origin/" + branch).c_str()) < 0)
    return std::nullopt;
  return git_oid_text(&oid);
}

bool GitRemote::has_commit(const std::string& sha) const {
  Commit commit;
  git_oid oid;
  if (sha.size() != GIT_OID_HEXSZ || git_oid_fromstr(&oid, sha.c_str()) < 0) return false;
  return git_commit_lookup(commit.out(), state_->repo.get(), &oid) == 0;
}

namespace {

std::optional<std::string> file_at(git_repository* repo, const std::string& commit_sha, const std::string& path) {
  const git_oid oid = oid_of(commit_sha);
  Commit commit;
  Tree tree;
  TreeEntry entry;
  Blob blob;
  check(git_commit_lookup(commit.out(), repo, &oid), "commit " + commit_sha);
  check(git_commit_tree(tree.out(), commit.get()), "tree of " + commit_sha);
  if (git_tree_entry_bypath(entry.out(), tree.get(), path.c_str()) < 0) return std::nullopt;
  if (git_tree_entry_type(entry.get()) != GIT_OBJECT_BLOB) return std::nullopt;
  check(git_blob_lookup(blob.out(), repo, git_tree_entry_id(entry.get())), "blob " + path);
  return std::string(static_cast<const char*>(git_blob_rawcontent(blob.get())),
                     static_cast<std::size_t>(git_blob_rawsize(blob.get())));
}

}  // namespace

std::optional<std::string> GitRemote::read_file(const std::string& commit_sha, const std::string& path) const {
  return file_at(state_->repo.get(), commit_sha, path);
}

std::optional<std::string> GitRemote::read_local_file(const fs::path& dir, const std::string& commit,
                                                      const std::string& path) {
  init_libgit2();
  GitRepository repo;
  if (git_repository_open_ext(repo.out(), dir.c_str(), 0, nullptr) < 0) return std::nullopt;
  try {
    return file_at(repo.get(), commit, path);
  } catch (const GitError&) {
    return std::nullopt;
  }
}

std::string GitRemote::tree_of(const std::string& commit_sha) const {
  const git_oid oid = oid_of(commit_sha);
  Commit commit;
  check(git_commit_lookup(commit.out(), state_->repo.get(), &oid), "commit " + commit_sha);
  return git_oid_text(git_commit_tree_id(commit.get()));
}

std::vector<std::string> GitRemote::parents_of(const std::string& commit_sha) const {
  const git_oid oid = oid_of(commit_sha);
  Commit commit;
  check(git_commit_lookup(commit.out(), state_->repo.get(), &oid), "commit " + commit_sha);
  std::vector<std::string> out;
  for (unsigned i = 0; i < git_commit_parentcount(commit.get()); ++i)
    out.push_back(git_oid_text(git_commit_parent_id(commit.get(), i)));
  return out;
}

std::vector<CommitInfo> GitRemote::own_commits(const std::string& tip, const std::string& branch,
                                               const std::string& base) const {
  Walk walk;
  check(git_revwalk_new(walk.out(), state_->repo.get()), "revwalk");
  git_revwalk_sorting(walk.get(), GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME);
  const git_oid tip_oid = oid_of(tip);
  check(git_revwalk_push(walk.get(), &tip_oid), "revwalk " + tip);
  if (has_commit(base)) {
    const git_oid base_oid = oid_of(base);
    check(git_revwalk_hide(walk.get(), &base_oid), "revwalk hide " + base);
  }
  // Commits that another branch also has are not this branch's own.
  RefIterator refs;
  check(git_reference_iterator_glob_new(refs.out(), state_->repo.get(), "refs/remotes/origin/*"), "list branches");
  Reference ref;
  const std::string own = "refs/remotes/origin/" + branch;
  while (git_reference_next(ref.out(), refs.get()) == 0) {
    if (own == git_reference_name(ref.get()) || git_reference_type(ref.get()) != GIT_REFERENCE_DIRECT) continue;
    git_revwalk_hide(walk.get(), git_reference_target(ref.get()));  // a ref to a non-commit is skipped
  }
  std::vector<CommitInfo> out;
  git_oid oid;
  while (git_revwalk_next(&oid, walk.get()) == 0) {
    Commit commit;
    check(git_commit_lookup(commit.out(), state_->repo.get(), &oid), "commit");
    CommitInfo info;
    info.sha = git_oid_text(&oid);
    const git_signature* author = git_commit_author(commit.get());
    const git_signature* committer = git_commit_committer(commit.get());
    info.author_name = author->name ? author->name : "";
    info.author_email = author->email ? author->email : "";
    info.committer_email = committer->email ? committer->email : "";
    info.message = git_commit_message(commit.get()) ? git_commit_message(commit.get()) : "";
    out.push_back(std::move(info));
  }
  return out;
}

std::string GitRemote::commit_patch(const std::string& base, const std::string& patch, const GitIdentity& identity,
                                    const std::string& message, std::int64_t when) {
  const git_oid base_oid = oid_of(base);
  Commit parent;
  Tree base_tree, tree;
  Diff diff;
  Index index;
  Signature signature;
  check(git_commit_lookup(parent.out(), state_->repo.get(), &base_oid), "base commit " + base);
  check(git_commit_tree(base_tree.out(), parent.get()), "tree of " + base);
  check(git_diff_from_buffer(diff.out(), patch.data(), patch.size()), "patch.diff is not a diff");
  check(git_apply_to_tree(index.out(), state_->repo.get(), base_tree.get(), diff.get(), nullptr),
        "patch.diff does not apply to " + base.substr(0, 12));
  git_oid tree_oid, commit_oid;
  check(git_index_write_tree_to(&tree_oid, index.get(), state_->repo.get()), "write tree");
  check(git_tree_lookup(tree.out(), state_->repo.get(), &tree_oid), "tree");
  check(git_signature_new(signature.out(), identity.name.c_str(), identity.email.c_str(), when, 0),
        "bot identity '" + identity.name + " <" + identity.email + ">'");
  const git_commit* parents[] = {parent.get()};
  check(git_commit_create(&commit_oid, state_->repo.get(), nullptr, signature.get(), signature.get(), nullptr,
                          message.c_str(), tree.get(), 1, parents),
        "commit");
  return git_oid_text(&commit_oid);
}

void GitRemote::push(const std::string& sha, const std::string& branch, const bool force) {
  const git_oid oid = oid_of(sha);
  const std::string local = "refs/heads/" + branch;
  Reference ref;
  check(git_reference_create(ref.out(), state_->repo.get(), local.c_str(), &oid, /*force=*/1, "maxcode"),
        "branch " + branch);
  const std::string spec = (force ? "+" : "") + local + ":refs/heads/" + branch;
  char* specs[] = {const_cast<char*>(spec.c_str())};
  const git_strarray refspecs = {specs, 1};
  git_push_options options = GIT_PUSH_OPTIONS_INIT;
  options.callbacks = callbacks(state_.get());
  state_->credential_calls = 0;
  state_->remote_messages.clear();
  state_->rejection.clear();
  const int code = git_remote_push(state_->remote.get(), &refspecs, &options);
  const std::string server = remote_text(state_->remote_messages);
  if (code < 0)
    throw GitError("git push to " + branch + " failed: " + git_error_text() +
                   (server.empty() ? "" : " (server: " + server + ")"));
  if (!state_->rejection.empty())
    throw GitError("git push refused: " + state_->rejection + (server.empty() ? "" : " (server: " + server + ")"));
}

}  // namespace maxcode::bot
