#include "runner/workspace/patch.h"

#include <git2.h>

#include <filesystem>
#include <mutex>
#include <sstream>

#include "runner/util/beneath.h"
#include "runner/util/files.h"
#include "runner/util/git_util.h"
#include "runner/util/process.h"

namespace maxcode {

namespace fs = std::filesystem;

namespace {

// libgit2 reports /dev/null sides as the other side's path with a zero oid; the status
// says what happened.
DiffFile to_diff_file(const git_diff_delta* delta) {
  DiffFile file;
  if (delta->status != GIT_DELTA_ADDED) file.old_path = delta->old_file.path;
  if (delta->status != GIT_DELTA_DELETED) file.new_path = delta->new_file.path;
  return file;
}

// A source file larger than this after a candidate's diff is not a source file.
constexpr std::size_t kMaxPatchedFile = 64u << 20;

bool safe_relative(const std::string& path) {
  if (path.empty() || path[0] == '/') return false;
  for (const auto& part : fs::path(path))
    if (part == "..") return false;
  return true;
}

// "--- a/x.cc\t2024-01-01 ..." -> "x.cc"; "/dev/null" stays.
std::string header_path(const std::string& line) {
  std::string path = line.substr(4);
  path = path.substr(0, path.find('\t'));
  while (!path.empty() && (path.back() == ' ' || path.back() == '\r')) path.pop_back();
  if (path.rfind("a/", 0) == 0 || path.rfind("b/", 0) == 0) path = path.substr(2);
  return path;
}

}  // namespace

std::string to_git_diff(const std::string& diff) {
  std::istringstream in(diff);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  bool in_git_header = false;  // between "diff --git" and its first hunk
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.rfind("diff --git ", 0) == 0) in_git_header = true;
    if (line.rfind("@@", 0) == 0) in_git_header = false;
    const bool file_header = line.rfind("--- ", 0) == 0 && i + 1 < lines.size() &&
                             lines[i + 1].rfind("+++ ", 0) == 0;
    if (file_header && !in_git_header) {
      // A diff(1)-style header: give libgit2 and git apply the header they expect.
      const std::string from = header_path(line), to = header_path(lines[i + 1]);
      const std::string name = to == "/dev/null" ? from : to;
      out += "diff --git a/" + name + " b/" + name + "\n";
      if (from == "/dev/null") out += "new file mode 100644\n";
      if (to == "/dev/null") out += "deleted file mode 100644\n";
      out += (from == "/dev/null" ? "--- /dev/null" : "--- a/" + from) + "\n";
      out += (to == "/dev/null" ? "+++ /dev/null" : "+++ b/" + to) + "\n";
      ++i;
      continue;
    }
    out += line + "\n";
  }
  return out;
}

std::vector<DiffFile> files_in_diff(const std::string& raw) {
  init_libgit2();
  const std::string diff = to_git_diff(raw);
  GitOwned<git_diff, git_diff_free> parsed;
  if (git_diff_from_buffer(parsed.out(), diff.data(), diff.size()) != 0)
    throw PatchError("not a unified diff: " + git_error_text());
  std::vector<DiffFile> files;
  for (size_t i = 0, n = git_diff_num_deltas(parsed.get()); i < n; ++i)
    files.push_back(to_diff_file(git_diff_get_delta(parsed.get(), i)));
  if (files.empty()) throw PatchError("the diff touches no file");
  return files;
}

std::map<std::string, std::string> apply_diff(const std::string& raw,
                                              const std::map<std::string, std::string>& files) {
  const std::string diff = to_git_diff(raw);
  const auto touched = files_in_diff(diff);
  const fs::path scratch = make_unique_dir(fs::temp_directory_path(), "maxcode-apply-");
  struct Cleanup {
    fs::path dir;
    ~Cleanup() { remove_tree(dir); }  // links the diff made are removed, not followed
  } cleanup{scratch};

  for (const auto& file : touched)
    for (const std::string& path : {file.old_path, file.new_path}) {
      if (path.empty()) continue;
      if (!safe_relative(path)) throw PatchError("the diff names a path outside the repository: " + path);
      auto it = files.find(path);
      if (it != files.end()) write_text_exact(scratch / path, it->second);
    }
  write_text_exact(scratch / ".maxcode.patch", diff);

  Command apply;
  apply.shell = "git apply --whitespace=nowarn --recount .maxcode.patch";
  apply.cwd = scratch.string();
  apply.timeout_s = 30;
  // Outside a repository `git apply` behaves like patch(1) on plain files; make sure no
  // enclosing repository is discovered.
  apply.env = {{"GIT_CEILING_DIRECTORIES", scratch.parent_path().string()}};
  const Outcome outcome = run(apply);
  if (!outcome.ok()) throw PatchError("the diff does not apply: " + outcome.tail(1000));

  // The diff is a candidate's: it may have made the file a symbolic link (to a host file,
  // to a FIFO), or a directory on its way one. Read beneath the scratch directory, never
  // through a link, never past a bound (util/beneath.h).
  std::map<std::string, std::string> result;
  for (const auto& file : touched) {
    if (file.new_path.empty()) continue;
    try {
      result[file.new_path] = read_beneath(scratch, file.new_path, kMaxPatchedFile);
    } catch (const BeneathError& e) {
      throw PatchError(std::string("the diff does not leave a plain file: ") + e.what());
    }
  }
  return result;
}

std::string unified_diff(const std::string& path, const std::string& before,
                         const std::string& after) {
  init_libgit2();
  GitOwned<git_patch, git_patch_free> patch;
  git_diff_options options = GIT_DIFF_OPTIONS_INIT;
  options.context_lines = 3;
  if (git_patch_from_buffers(patch.out(), before.data(), before.size(), path.c_str(), after.data(), after.size(),
                             path.c_str(), &options) != 0)
    throw PatchError("cannot make a diff of " + path + ": " + git_error_text());
  git_buf text = GIT_BUF_INIT;
  const int rc = git_patch_to_buf(&text, patch.get());
  std::string out = rc == 0 && text.ptr ? std::string(text.ptr, text.size) : "";
  git_buf_dispose(&text);
  if (rc != 0) throw PatchError("cannot print the diff of " + path + ": " + git_error_text());
  return out;
}

}  // namespace maxcode
