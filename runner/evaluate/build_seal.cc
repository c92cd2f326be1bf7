#include "runner/evaluate/build_seal.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <thread>

#include "runner/util/beneath.h"

namespace maxcode {

namespace fs = std::filesystem;

namespace {

// How far the clock must be past the newest sealed ctime before seal_build returns:
// file times come from the kernel's coarse clock, which lags by up to a tick (1 to
// 10 ms), so a write just after the seal could otherwise get a sealed file's ctime.
constexpr std::int64_t kCtimeMarginNs = 50'000'000;

std::int64_t nanoseconds(const timespec& t) {
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

FileStat to_file_stat(const struct stat& st) {
  FileStat f;
  f.kind = S_ISREG(st.st_mode) ? FileStat::Kind::kFile
           : S_ISLNK(st.st_mode) ? FileStat::Kind::kLink
                                 : FileStat::Kind::kOther;
  f.dev = st.st_dev;
  f.ino = st.st_ino;
  f.size = static_cast<std::uint64_t>(st.st_size);
  f.mode = st.st_mode & 07777;
  f.mtime_ns = nanoseconds(st.st_mtim);
  f.ctime_ns = nanoseconds(st.st_ctim);
  return f;
}

// What is at `path` beneath the workspace, not followed; nullopt when nothing is. A
// directory on the way that became a link is refused (BeneathError), never followed.
std::optional<FileStat> lstat_of(const fs::path& workspace, const std::string& path) {
  auto st = lstat_beneath(workspace, path);
  if (!st) return std::nullopt;
  return to_file_stat(*st);
}

std::string hex(const unsigned char* digest, unsigned length) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < length; ++i) {
    out.push_back(digits[digest[i] >> 4]);
    out.push_back(digits[digest[i] & 15]);
  }
  return out;
}

std::optional<std::string> sha256_of_bytes(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) != 1) return std::nullopt;
  return hex(digest, length);
}

// The SHA-256 of a regular file beneath the workspace, read without following a link at
// its name or on its way (and without blocking on a FIFO that replaced it); `opened` is
// the file as it was while read.
std::optional<std::string> sha256_of_file(const fs::path& workspace, const std::string& path, FileStat& opened) {
  int fd = -1;
  try {
    fd = open_file_beneath(workspace, path);
  } catch (const BeneathError&) {
    return std::nullopt;
  }
  std::unique_ptr<int, void (*)(int*)> closer(&fd, [](int* f) { ::close(*f); });
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) return std::nullopt;
  std::vector<char> buffer(1 << 20);
  for (;;) {
    ssize_t got = ::read(fd, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return std::nullopt;
    if (got == 0) break;
    if (EVP_DigestUpdate(ctx.get(), buffer.data(), static_cast<std::size_t>(got)) != 1) return std::nullopt;
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned length = 0;
  if (EVP_DigestFinal_ex(ctx.get(), digest, &length) != 1) return std::nullopt;
  // Stamped as it was after the read: a change while it was read shows at the next check.
  if (::fstat(fd, &st) != 0) return std::nullopt;
  opened = to_file_stat(st);
  return hex(digest, length);
}

std::optional<std::string> link_target(const fs::path& workspace, const std::string& path) {
  try {
    return read_link_beneath(workspace, path);
  } catch (const BeneathError&) {
    return std::nullopt;
  }
}

// What a sealed entry holds now; nullopt when it cannot be read.
std::optional<SealedFile> seal_entry(const fs::path& workspace, const std::string& path, const FileStat& seen) {
  SealedFile sealed;
  sealed.stat = seen;
  if (seen.kind == FileStat::Kind::kLink) {
    auto target = link_target(workspace, path);
    if (!target) return std::nullopt;
    auto hash = sha256_of_bytes(*target);
    if (!hash) return std::nullopt;
    sealed.sha256 = *hash;
    return sealed;
  }
  auto hash = sha256_of_file(workspace, path, sealed.stat);
  if (!hash) return std::nullopt;
  sealed.sha256 = *hash;
  return sealed;
}

bool ignored_name(const std::string& name) { return name == ".ninja_log" || name == ".ninja_deps"; }

// A ctime the kernel cannot have given a later write: see build_seal.h. A ctime of a
// whole second is taken as a file system that keeps seconds only, where it proves little.
bool stamp_proves_unchanged(const FileStat& sealed, const FileStat& now) {
  return sealed == now && sealed.ctime_ns % 1'000'000'000 != 0;
}

std::string octal(unsigned mode) {
  char text[16];
  std::snprintf(text, sizeof text, "%04o", mode);
  return text;
}

void wait_past(std::int64_t newest_ctime_ns) {
  for (;;) {
    timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    const std::int64_t left = newest_ctime_ns + kCtimeMarginNs - nanoseconds(now);
    if (left <= 0) return;
    std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<std::int64_t>(left, kCtimeMarginNs)));
  }
}

}  // namespace

namespace {

// Adds the files and links under `directory` ("" for the top) to `files`; a link is an
// entry, never entered (util/beneath.h).
void stat_directory(const fs::path& workspace, const std::string& directory, int depth,
                    const std::set<std::string>& excluded, std::map<std::string, FileStat>& files) {
  // Deeper than any build tree: whatever made it is not sealed below this depth, and any
  // change to what was sealed above still shows.
  if (depth > 64) return;
  std::vector<BeneathEntry> entries;
  try {
    entries = list_beneath(workspace, directory);
  } catch (const BeneathError&) {
    return;  // unreadable, or gone: as the permission-denied directories before
  }
  for (const BeneathEntry& entry : entries) {
    const std::string relative = directory.empty() ? entry.name : directory + "/" + entry.name;
    if (entry.kind == BeneathEntry::Kind::kDirectory) {
      if (depth == 0 && entry.name.rfind(".maxcode-", 0) == 0) continue;
      stat_directory(workspace, relative, depth + 1, excluded, files);
      continue;
    }
    if (ignored_name(entry.name) || excluded.count(relative)) continue;
    const FileStat seen = to_file_stat(entry.st);
    if (seen.kind == FileStat::Kind::kOther) continue;
    files[relative] = seen;
  }
}

}  // namespace

std::map<std::string, FileStat> stat_tree(const fs::path& workspace, const std::set<std::string>& excluded) {
  std::map<std::string, FileStat> files;
  stat_directory(workspace, "", 0, excluded, files);
  return files;
}

BuildSeal seal_build(const fs::path& workspace, const std::map<std::string, FileStat>& before,
                     const BuildSeal& previous, const std::set<std::string>& excluded) {
  BuildSeal seal;
  std::int64_t newest = 0;
  for (const auto& [path, seen] : stat_tree(workspace, excluded)) {
    auto sealed = previous.files.find(path);
    if (sealed != previous.files.end() && stamp_proves_unchanged(sealed->second.stat, seen)) {
      seal.files[path] = sealed->second;
      continue;
    }
    auto earlier = before.find(path);
    const bool built = sealed != previous.files.end() || earlier == before.end() || !(earlier->second == seen);
    if (!built) continue;  // there before the build and untouched by it: not an output
    auto entry = seal_entry(workspace, path, seen);
    if (!entry) {
      // Unreadable to us (or gone while read): sealed as unreadable, so that any change
      // to it later counts as one.
      entry = SealedFile{seen, ""};
    }
    newest = std::max(newest, entry->stat.ctime_ns);
    seal.files[path] = std::move(*entry);
  }
  wait_past(newest);
  return seal;
}

std::vector<SealBreak> verify_seal(const fs::path& workspace, const BuildSeal& seal) {
  std::vector<SealBreak> breaks;
  for (const auto& [path, sealed] : seal.files) {
    std::optional<FileStat> now;
    try {
      now = lstat_of(workspace, path);
    } catch (const BeneathError&) {
      breaks.push_back({path, "a directory on its way was replaced by a symbolic link"});
      continue;
    }
    if (!now) {
      breaks.push_back({path, "removed"});
      continue;
    }
    if (now->kind != sealed.stat.kind) {
      breaks.push_back({path, now->kind == FileStat::Kind::kLink ? "replaced by a symbolic link"
                              : now->kind == FileStat::Kind::kFile ? "replaced by a file"
                                                                   : "replaced by something that is not a file"});
      continue;
    }
    if (stamp_proves_unchanged(sealed.stat, *now)) continue;
    std::vector<std::string> what;
    auto entry = seal_entry(workspace, path, *now);
    if (!entry || sealed.sha256.empty()) {
      what.push_back("it cannot be read");
    } else if (entry->sha256 != sealed.sha256) {
      what.push_back(now->kind == FileStat::Kind::kLink ? "it points elsewhere" : "its content changed");
    }
    if (now->kind == FileStat::Kind::kFile && now->mode != sealed.stat.mode)
      what.push_back("mode " + octal(sealed.stat.mode) + " -> " + octal(now->mode));
    if (what.empty()) continue;  // rewritten or touched, but as it was
    std::string text = what.front();
    for (std::size_t i = 1; i < what.size(); ++i) text += ", " + what[i];
    breaks.push_back({path, text});
  }
  return breaks;
}

std::string describe(const std::vector<SealBreak>& breaks, std::size_t max_listed) {
  std::string text;
  for (std::size_t i = 0; i < breaks.size() && i < max_listed; ++i)
    text += (text.empty() ? "" : ", ") + breaks[i].path + " (" + breaks[i].what + ")";
  if (breaks.size() > max_listed) text += " and " + std::to_string(breaks.size() - max_listed) + " more";
  return text;
}

}  // namespace maxcode
