#include "runner/util/beneath.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

namespace maxcode {

namespace fs = std::filesystem;

namespace {

using Kind = BeneathError::Kind;

// A directory walk deeper than this is refused (removal leaves it, with an error):
// every level holds a descriptor open.
constexpr int kMaxDepth = 256;

std::atomic<bool> g_walk_only{false};
std::atomic<bool> g_no_openat2{false};  // the kernel said ENOSYS once

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  ~Fd() { reset(); }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  explicit operator bool() const { return fd_ >= 0; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// A path beneath a root, checked lexically and split into its names.
struct Relative {
  std::string text;                // '/'-separated, for messages ("." for the root)
  std::vector<std::string> parts;  // without "." and empty names
};

Relative relative_of(const fs::path& root, const fs::path& path) {
  fs::path rel = path;
  if (path.is_absolute()) {
    rel = path.lexically_normal().lexically_relative(root.lexically_normal());
    if (rel.empty()) throw BeneathError(Kind::kLink, path.filename().string(), "not beneath " + root.string());
  }
  Relative r;
  for (const auto& part : rel) {
    const std::string name = part.string();
    if (name.empty() || name == "." || name == "/") continue;
    if (name == "..") {
      if (r.parts.empty()) throw BeneathError(Kind::kLink, rel.generic_string(), "it climbs out of its directory");
      r.parts.pop_back();  // lexically, as the kernel would refuse to climb a link
      continue;
    }
    r.parts.push_back(name);
  }
  for (const auto& part : r.parts) r.text += (r.text.empty() ? "" : "/") + part;
  if (r.text.empty()) r.text = ".";
  return r;
}

std::string joined(const std::vector<std::string>& parts, std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count && i < parts.size(); ++i) out += (out.empty() ? "" : "/") + parts[i];
  return out.empty() ? "." : out;
}

std::string kind_of_mode(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

Fd open_root(const fs::path& root, const std::string& relative) {
  const int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    throw BeneathError(error == ENOENT ? Kind::kMissing : Kind::kIo, relative,
                       std::string("its root directory cannot be opened: ") + std::strerror(error));
  }
  return Fd(fd);
}

// Why an open of `parts[index]` in the directory `dir` failed with `error`: a link is
// named as a link whatever errno the kernel chose (ELOOP, or ENOTDIR with O_DIRECTORY).
[[noreturn]] void fail_at(int dir, const Relative& r, std::size_t index, int error) {
  const std::string at = joined(r.parts, index + 1);
  const bool last = index + 1 == r.parts.size();
  struct stat st {};
  const bool seen = ::fstatat(dir, r.parts[index].c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
  const std::string where = last ? "" : " (" + at + ")";
  if (error == ELOOP || (seen && S_ISLNK(st.st_mode)))
    throw BeneathError(Kind::kLink, r.text,
                       (last ? std::string("it is a symbolic link") : at + " is a symbolic link") + ", not followed");
  if (error == ENOENT) throw BeneathError(Kind::kMissing, r.text, "not there" + where);
  if (error == ENOTDIR) {
    if (last && seen) throw BeneathError(Kind::kNotRegular, r.text, "not a directory: " + kind_of_mode(st.st_mode));
    throw BeneathError(Kind::kMissing, r.text, at + " is not a directory");
  }
  if (error == EXDEV) throw BeneathError(Kind::kLink, r.text, "it leads out of its directory");
  throw BeneathError(Kind::kIo, r.text, std::strerror(error) + where);
}

// The walk: every directory on the way opened O_NOFOLLOW | O_DIRECTORY, the last name
// with `flags` | O_NOFOLLOW. Returns the descriptor of `parts[0..count)`'s directory
// when `count` < parts.size() is asked for through `parent_only`.
Fd walk(int root, const Relative& r, int flags, mode_t mode, bool parent_only) {
  Fd current(::fcntl(root, F_DUPFD_CLOEXEC, 0));
  if (!current) throw BeneathError(Kind::kIo, r.text, std::strerror(errno));
  const std::size_t directories = r.parts.empty() ? 0 : r.parts.size() - 1;
  for (std::size_t i = 0; i < directories; ++i) {
    const int fd = ::openat(current.get(), r.parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) fail_at(current.get(), r, i, errno);
    current = Fd(fd);
  }
  if (parent_only || r.parts.empty()) return current;
  const int fd = ::openat(current.get(), r.parts.back().c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) fail_at(current.get(), r, r.parts.size() - 1, errno);
  return Fd(fd);
}

// `r` beneath the directory `root`, opened with `flags`.
Fd open_at(int root, const Relative& r, int flags, mode_t mode = 0) {
  if (r.parts.empty()) {
    const int fd = ::fcntl(root, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) throw BeneathError(Kind::kIo, r.text, std::strerror(errno));
    return Fd(fd);
  }
  if (!g_walk_only && !g_no_openat2) {
    open_how how{};
    how.flags = static_cast<std::uint64_t>(flags | O_NOFOLLOW | O_CLOEXEC);
    how.mode = (flags & O_CREAT) ? mode : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    for (int attempt = 0; attempt < 8; ++attempt) {
      const long fd = ::syscall(SYS_openat2, root, r.text.c_str(), &how, sizeof how);
      if (fd >= 0) return Fd(static_cast<int>(fd));
      if (errno == EINTR || errno == EAGAIN) continue;  // EAGAIN: a rename raced the lookup
      if (errno == ENOSYS) {
        g_no_openat2 = true;
        break;
      }
      if (errno == E2BIG || errno == EPERM) break;  // not this kernel's openat2, or a filter refused it
      // Refused: the walk, which takes the same path without following anything, says
      // which name is to blame (and opens it, should it have changed meanwhile into
      // something that may be opened).
      break;
    }
  }
  return walk(root, r, flags, mode, false);
}

void check_regular(int fd, const Relative& r, struct stat& st) {
  if (::fstat(fd, &st) != 0) throw BeneathError(Kind::kIo, r.text, std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw BeneathError(Kind::kNotRegular, r.text, "not a regular file: " + kind_of_mode(st.st_mode));
}

BeneathEntry::Kind entry_kind(mode_t mode) {
  if (S_ISREG(mode)) return BeneathEntry::Kind::kFile;
  if (S_ISDIR(mode)) return BeneathEntry::Kind::kDirectory;
  if (S_ISLNK(mode)) return BeneathEntry::Kind::kLink;
  return BeneathEntry::Kind::kOther;
}

// The entries of the open directory `fd` (consumed).
std::vector<BeneathEntry> entries_of(Fd fd, const std::string& relative) {
  // fdopendir takes the descriptor; a duplicate keeps ours for fstatat.
  const int dup = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, 0);
  if (dup < 0) throw BeneathError(Kind::kIo, relative, std::strerror(errno));
  DIR* dir = ::fdopendir(dup);
  if (!dir) {
    const int error = errno;
    ::close(dup);
    throw BeneathError(Kind::kIo, relative, std::strerror(error));
  }
  std::vector<BeneathEntry> entries;
  for (errno = 0; dirent* d = ::readdir(dir); errno = 0) {
    const std::string name = d->d_name;
    if (name == "." || name == "..") continue;
    BeneathEntry entry;
    entry.name = name;
    if (::fstatat(fd.get(), d->d_name, &entry.st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
    entry.kind = entry_kind(entry.st.st_mode);
    entries.push_back(std::move(entry));
  }
  const int error = errno;
  ::closedir(dir);
  if (error != 0) throw BeneathError(Kind::kIo, relative, std::strerror(error));
  std::sort(entries.begin(), entries.end(), [](const BeneathEntry& a, const BeneathEntry& b) { return a.name < b.name; });
  return entries;
}

// Removes `name` in the open directory `dir`, and all under it, following no link.
bool remove_at(int dir, const std::string& name, const std::string& relative, int depth, std::string* error) {
  struct stat st {};
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return true;
    if (error) *error = relative + ": " + std::strerror(errno);
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    if (::unlinkat(dir, name.c_str(), 0) == 0 || errno == ENOENT) return true;
    if (error) *error = relative + ": " + std::strerror(errno);
    return false;
  }
  if (depth > kMaxDepth) {
    if (error) *error = relative + ": nested deeper than " + std::to_string(kMaxDepth) + " directories";
    return false;
  }
  bool ok = true;
  {
    const int fd = ::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      // Replaced meanwhile (a link now): unlink whatever is there, never enter it.
      if (::unlinkat(dir, name.c_str(), 0) == 0 || errno == ENOENT) return true;
      if (error) *error = relative + ": " + std::strerror(errno);
      return false;
    }
    Fd child(fd);
    // A directory without write or search permission (a candidate may chmod its own)
    // cannot be emptied: give it back to its owner's use first.
    if ((st.st_mode & 0700) != 0700) ::fchmod(child.get(), st.st_mode | 0700);
    std::vector<BeneathEntry> entries;
    try {
      entries = entries_of(Fd(::fcntl(child.get(), F_DUPFD_CLOEXEC, 0)), relative);
    } catch (const BeneathError& e) {
      if (error) *error = e.what();
      return false;
    }
    for (const BeneathEntry& entry : entries)
      ok = remove_at(child.get(), entry.name, relative + "/" + entry.name, depth + 1, error) && ok;
  }
  if (::unlinkat(dir, name.c_str(), AT_REMOVEDIR) == 0 || errno == ENOENT) return ok;
  if (ok && error) *error = relative + ": " + std::strerror(errno);
  return false;
}

}  // namespace

BeneathError::BeneathError(Kind kind, std::string relative, const std::string& what)
    : Error(relative + ": " + what), kind_(kind), relative_(std::move(relative)) {}

const char* to_string(BeneathError::Kind kind) {
  switch (kind) {
    case Kind::kLink: return "link";
    case Kind::kNotRegular: return "not-regular";
    case Kind::kTooLarge: return "too-large";
    case Kind::kMissing: return "missing";
    case Kind::kIo: return "io";
  }
  return "io";
}

std::string read_beneath(const fs::path& root, const fs::path& path, std::size_t max_bytes) {
  const Relative r = relative_of(root, path);
  Fd base = open_root(root, r.text);
  Fd fd = open_at(base.get(), r, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  struct stat st {};
  check_regular(fd.get(), r, st);
  const std::string cap = "larger than " + std::to_string(max_bytes) + " bytes";
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) throw BeneathError(Kind::kTooLarge, r.text, cap);
  std::string data;
  data.reserve(static_cast<std::size_t>(st.st_size));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw BeneathError(Kind::kIo, r.text, std::strerror(errno));
    if (n == 0) break;
    if (data.size() + static_cast<std::size_t>(n) > max_bytes) throw BeneathError(Kind::kTooLarge, r.text, cap);
    data.append(buffer, static_cast<std::size_t>(n));
  }
  return data;
}

int open_file_beneath(const fs::path& root, const fs::path& path) {
  const Relative r = relative_of(root, path);
  Fd base = open_root(root, r.text);
  Fd fd = open_at(base.get(), r, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  struct stat st {};
  check_regular(fd.get(), r, st);
  return fd.release();
}

std::optional<struct stat> lstat_beneath(const fs::path& root, const fs::path& path) {
  const Relative r = relative_of(root, path);
  Fd base = open_root(root, r.text);
  struct stat st {};
  if (r.parts.empty()) {
    if (::fstat(base.get(), &st) != 0) throw BeneathError(Kind::kIo, r.text, std::strerror(errno));
    return st;
  }
  Fd parent;
  try {
    parent = walk(base.get(), r, 0, 0, true);
  } catch (const BeneathError& e) {
    if (e.kind() == Kind::kMissing) return std::nullopt;
    throw;
  }
  if (::fstatat(parent.get(), r.parts.back().c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
    throw BeneathError(Kind::kIo, r.text, std::strerror(errno));
  }
  return st;
}

std::string read_link_beneath(const fs::path& root, const fs::path& path) {
  const Relative r = relative_of(root, path);
  if (r.parts.empty()) throw BeneathError(Kind::kNotRegular, r.text, "not a symbolic link");
  Fd base = open_root(root, r.text);
  Fd parent = walk(base.get(), r, 0, 0, true);
  std::string target(4096, '\0');
  const ssize_t n = ::readlinkat(parent.get(), r.parts.back().c_str(), target.data(), target.size());
  if (n < 0) {
    const int error = errno;
    if (error == EINVAL) throw BeneathError(Kind::kNotRegular, r.text, "not a symbolic link");
    throw BeneathError(error == ENOENT ? Kind::kMissing : Kind::kIo, r.text, std::strerror(error));
  }
  target.resize(static_cast<std::size_t>(n));
  return target;
}

std::vector<BeneathEntry> list_beneath(const fs::path& root, const fs::path& path) {
  const Relative r = relative_of(root, path);
  Fd base = open_root(root, r.text);
  return entries_of(open_at(base.get(), r, O_RDONLY | O_DIRECTORY), r.text);
}

bool remove_beneath(const fs::path& root, const fs::path& path, std::string* error) noexcept {
  try {
    const Relative r = relative_of(root, path);
    if (r.parts.empty()) {
      if (error) *error = "refusing to remove the root itself";
      return false;
    }
    Fd base;
    try {
      base = open_root(root, r.text);
    } catch (const BeneathError& e) {
      if (e.kind() == Kind::kMissing) return true;
      throw;
    }
    Fd parent;
    try {
      parent = walk(base.get(), r, 0, 0, true);
    } catch (const BeneathError& e) {
      if (e.kind() == Kind::kMissing) return true;  // nothing there to remove
      throw;
    }
    return remove_at(parent.get(), r.parts.back(), r.text, 0, error);
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return false;
  }
}

bool remove_tree(const fs::path& root, std::string* error) noexcept {
  try {
    fs::path tree = root.lexically_normal();
    if (!tree.has_filename()) tree = tree.parent_path();  // "ws/" names "ws"
    if (tree.empty() || tree.filename() == "." || tree.filename() == ".." || tree == tree.root_path()) {
      if (error) *error = "refusing to remove " + root.string();
      return false;
    }
    const fs::path parent = tree.parent_path().empty() ? fs::path(".") : tree.parent_path();
    const int fd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) return true;
      if (error) *error = parent.string() + ": " + std::strerror(errno);
      return false;
    }
    Fd dir(fd);
    return remove_at(dir.get(), tree.filename().string(), tree.filename().string(), 0, error);
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return false;
  }
}

void make_dirs_beneath(const fs::path& root, const fs::path& path) {
  const Relative r = relative_of(root, path);
  Fd current = open_root(root, r.text);
  for (std::size_t i = 0; i < r.parts.size(); ++i) {
    if (::mkdirat(current.get(), r.parts[i].c_str(), 0755) != 0 && errno != EEXIST)
      throw BeneathError(Kind::kIo, r.text, "cannot create " + joined(r.parts, i + 1) + ": " + std::strerror(errno));
    const int fd = ::openat(current.get(), r.parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) fail_at(current.get(), r, i, errno);
    current = Fd(fd);
  }
}

void write_beneath(const fs::path& root, const fs::path& path, const std::string& content) {
  const Relative r = relative_of(root, path);
  if (r.parts.empty()) throw BeneathError(Kind::kNotRegular, r.text, "not a file");
  if (r.parts.size() > 1) {
    std::vector<std::string> parents(r.parts.begin(), r.parts.end() - 1);
    make_dirs_beneath(root, joined(parents, parents.size()));
  }
  Fd base = open_root(root, r.text);
  Fd fd = open_at(base.get(), r, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_NOCTTY, 0644);
  struct stat st {};
  check_regular(fd.get(), r, st);
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd.get(), content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw BeneathError(Kind::kIo, r.text, std::string("cannot write: ") + std::strerror(errno));
    written += static_cast<std::size_t>(n);
  }
}

void resolve_beneath_by_walk_for_tests(bool walk) { g_walk_only = walk; }

}  // namespace maxcode
