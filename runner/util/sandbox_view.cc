#include "runner/util/sandbox_view.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

namespace maxcode {

namespace {

namespace fs = std::filesystem;

bool is_at_or_under(const fs::path& path, const fs::path& dir) {
  auto [dir_end, path_it] = std::mismatch(dir.begin(), dir.end(), path.begin(), path.end());
  return dir_end == dir.end();
}

enum class Type { kMissing, kDirectory, kFile, kLink };

Type type_of(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return Type::kMissing;
  if (S_ISLNK(st.st_mode)) return Type::kLink;
  return S_ISDIR(st.st_mode) ? Type::kDirectory : Type::kFile;
}

std::vector<std::string> etc_secrets() {
  std::vector<std::string> files(std::begin(kEtcSecrets), std::end(kEtcSecrets));
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/etc/ssh", ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("ssh_host_", 0) == 0 && name.size() > 4 && name.compare(name.size() - 4, 4, "_key") == 0)
      files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

std::vector<SandboxMount> sandbox_view(const SandboxNeeds& needs) {
  using Kind = SandboxMount::Kind;
  std::vector<SandboxMount> mounts;
  std::vector<std::string> shown;  // trees of the host bound so far
  auto visible = [&](const std::string& path) {
    return std::any_of(shown.begin(), shown.end(), [&](const std::string& dir) { return is_at_or_under(path, dir); });
  };
  auto bind = [&](Kind kind, const std::string& path) {
    mounts.push_back({kind, path, path, type_of(path) == Type::kDirectory});
    shown.push_back(path);
  };

  for (const char* dir : kSystemDirs) {
    switch (type_of(dir)) {
      case Type::kDirectory:
        bind(Kind::kReadOnly, dir);
        break;
      case Type::kLink: {
        std::error_code ec;
        fs::path text = fs::read_symlink(dir, ec);
        if (!ec) mounts.push_back({Kind::kSymlink, text.string(), dir, false});
        break;
      }
      default:
        break;
    }
  }
  for (const auto& secret : etc_secrets()) {
    Type type = type_of(secret);
    if (type == Type::kDirectory || type == Type::kFile) mounts.push_back({Kind::kHidden, "", secret, type == Type::kDirectory});
  }
  mounts.push_back({Kind::kTmpfs, "", "/tmp", true});

  // The working directory, read-only unless a writable path holds it; nothing to bind
  // when the system's directories show it already (or it is the root).
  const bool cwd_written = std::any_of(needs.writable.begin(), needs.writable.end(),
                                       [&](const std::string& dir) { return is_at_or_under(needs.cwd, dir); });
  if (!needs.cwd.empty() && needs.cwd != "/" && !cwd_written && !visible(needs.cwd)) bind(Kind::kReadOnly, needs.cwd);
  for (const auto& path : needs.readable) {
    if (!visible(path)) bind(Kind::kReadOnly, path);
  }
  // Last, so that a writable path covers a read-only view of a tree above it.
  for (const auto& path : needs.writable) bind(Kind::kWritable, path);

  for (const auto& file : needs.secret_files) {
    Type type = type_of(file);
    if ((type == Type::kFile || type == Type::kDirectory) && visible(file))
      mounts.push_back({Kind::kHidden, "", file, type == Type::kDirectory});
  }
  return mounts;
}

}  // namespace maxcode
