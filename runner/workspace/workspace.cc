#include "runner/workspace/workspace.h"

#include <git2.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

#include "runner/util/beneath.h"
#include "runner/util/files.h"
#include "runner/util/git_util.h"

namespace maxcode {

namespace fs = std::filesystem;

namespace {

// Paths (relative to the work tree) worth copying: tracked files plus untracked files
// that .gitignore does not exclude; with whether each differs from HEAD.
struct GitFiles {
  std::set<std::string> paths;
  std::vector<std::string> changed;
};

GitFiles list_git_files(git_repository* repo) {
  GitFiles files;
  GitOwned<git_index, git_index_free> index;
  if (git_repository_index(index.out(), repo) != 0)
    throw WorkspaceError("cannot read the git index: " + git_error_text());
  for (size_t i = 0, n = git_index_entrycount(index.get()); i < n; ++i) {
    const git_index_entry* entry = git_index_get_byindex(index.get(), i);
    if ((entry->mode & 0170000) == 0160000) continue;  // submodule: not ours to copy
    files.paths.insert(entry->path);
  }
  git_status_options options = GIT_STATUS_OPTIONS_INIT;
  options.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
  options.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
                  GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
  GitOwned<git_status_list, git_status_list_free> status;
  if (git_status_list_new(status.out(), repo, &options) != 0)
    throw WorkspaceError("cannot read git status: " + git_error_text());
  for (size_t i = 0, n = git_status_list_entrycount(status.get()); i < n; ++i) {
    const git_status_entry* entry = git_status_byindex(status.get(), i);
    const git_diff_delta* delta = entry->index_to_workdir ? entry->index_to_workdir
                                                          : entry->head_to_index;
    if (!delta || !delta->new_file.path) continue;
    if (entry->status & GIT_STATUS_WT_NEW) files.paths.insert(delta->new_file.path);
    files.changed.push_back(delta->new_file.path);
  }
  return files;
}

std::string head_commit(git_repository* repo) {
  git_oid oid;
  if (git_reference_name_to_id(&oid, repo, "HEAD") != 0) return "";  // unborn branch
  return git_oid_text(&oid);
}

void copy_entry(const fs::path& from, const fs::path& to) {
  fs::create_directories(to.parent_path());
  fs::copy(from, to, fs::copy_options::copy_symlinks | fs::copy_options::overwrite_existing);
}

bool capture_from_git(const fs::path& repo_dir, const fs::path& destination,
                      SourceSnapshot& snapshot) {
  init_libgit2();
  GitRepository repo;
  if (git_repository_open_ext(repo.out(), repo_dir.c_str(), 0, nullptr) != 0) return false;
  const char* workdir = git_repository_workdir(repo.get());
  if (!workdir) return false;  // bare repository: treat as plain files
  std::string prefix = fs::relative(fs::canonical(repo_dir), fs::canonical(workdir)).generic_string();
  if (prefix == ".") prefix.clear();
  if (!prefix.empty()) prefix += '/';

  GitFiles files = list_git_files(repo.get());
  for (const std::string& path : files.paths) {
    if (path.compare(0, prefix.size(), prefix) != 0) continue;
    const fs::path source = fs::path(workdir) / path;
    std::error_code ec;
    auto status = fs::symlink_status(source, ec);
    if (ec || !(fs::is_regular_file(status) || fs::is_symlink(status))) continue;  // deleted
    copy_entry(source, destination / path.substr(prefix.size()));
  }
  for (const std::string& path : files.changed)
    if (path.compare(0, prefix.size(), prefix) == 0)
      snapshot.local_changes.push_back(path.substr(prefix.size()));
  snapshot.git = true;
  snapshot.commit = head_commit(repo.get());
  snapshot.git_prefix = prefix;
  return true;
}

std::map<std::string, std::string> hash_tree(const fs::path& root) {
  std::map<std::string, std::string> manifest;
  for (const std::string& path : list_files(root))
    manifest[path] = sha256_hex(read_text(root / path));
  return manifest;
}

}  // namespace

SourceSnapshot capture_source(const fs::path& repo, const fs::path& destination,
                              const std::vector<std::string>& exclude_top_level) {
  if (!fs::is_directory(repo))
    throw WorkspaceError(repo.string() + ": not a directory");
  SourceSnapshot snapshot;
  snapshot.repo = fs::canonical(repo);
  snapshot.root = destination;
  fs::create_directories(destination);
  try {
    if (!capture_from_git(snapshot.repo, destination, snapshot))
      copy_tree(snapshot.repo, destination, [&] {
        auto skip = exclude_top_level;
        skip.push_back(".git");
        return skip;
      }());
  } catch (const fs::filesystem_error& e) {
    throw WorkspaceError("cannot copy " + repo.string() + ": " + e.what());
  }
  snapshot.manifest = hash_tree(destination);
  if (snapshot.manifest.empty())
    throw WorkspaceError(repo.string() + ": no files to work on");
  return snapshot;
}

void create_workspace(const SourceSnapshot& source, const fs::path& destination,
                      const std::map<std::string, std::string>& overrides) {
  try {
    copy_tree(source.root, destination);
  } catch (const fs::filesystem_error& e) {
    throw WorkspaceError("cannot create workspace " + destination.string() + ": " + e.what());
  }
  for (const auto& [path, content] : overrides) write_text_exact(destination / path, content);
}

std::vector<std::string> tampered_files(const SourceSnapshot& source, const fs::path& workspace,
                                        const std::map<std::string, std::string>& overrides) {
  // Whatever ran in the workspace may have replaced any file, or a directory on the way
  // to it, by a link to a host file or by a FIFO: each source is looked at beneath the
  // workspace without following a link (util/beneath.h), read only if it is a regular
  // file, and never past the size it should have.
  std::vector<std::string> tampered;
  for (const auto& [path, hash] : source.manifest) {
    std::optional<struct stat> now;
    try {
      now = lstat_beneath(workspace, path);
    } catch (const BeneathError&) {
      tampered.push_back(path);  // a directory on its way is a link now
      continue;
    }
    if (!now || !(S_ISREG(now->st_mode) || S_ISLNK(now->st_mode))) {
      tampered.push_back(path);
      continue;
    }
    // As the snapshot has it: a file made a link (or the reverse), or made executable,
    // unreadable or writable to others, changed too (a test script's mode decides how
    // it runs).
    std::error_code original_ec;
    const fs::file_status original = fs::symlink_status(source.root / path, original_ec);
    const fs::file_type type = S_ISLNK(now->st_mode) ? fs::file_type::symlink : fs::file_type::regular;
    const fs::perms mode = static_cast<fs::perms>(now->st_mode & 07777);
    if (!original_ec && (original.type() != type ||
                         (type == fs::file_type::regular && original.permissions() != mode))) {
      tampered.push_back(path);
      continue;
    }
    auto override = overrides.find(path);
    try {
      if (type == fs::file_type::symlink) {
        // A link as the snapshot has it: the same target text, never followed.
        if (override != overrides.end() || read_link_beneath(workspace, path) != fs::read_symlink(source.root / path).string())
          tampered.push_back(path);
        continue;
      }
      const std::uint64_t size = override != overrides.end() ? override->second.size()
                                                             : fs::file_size(source.root / path, original_ec);
      if (original_ec || static_cast<std::uint64_t>(now->st_size) != size) {
        tampered.push_back(path);
        continue;
      }
      const std::string content = read_beneath(workspace, path, size);
      const std::string expected = override != overrides.end() ? sha256_hex(override->second) : hash;
      if (sha256_hex(content) != expected) tampered.push_back(path);
    } catch (const std::exception&) {
      tampered.push_back(path);  // replaced while looked at, unreadable, or larger than it was
    }
  }
  return tampered;
}

void remove_workspace(const fs::path& workspace) noexcept {
  // Links that candidate code planted in it are removed as links, never followed out.
  remove_tree(workspace);
}

}  // namespace maxcode
