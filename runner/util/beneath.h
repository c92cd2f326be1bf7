// Files beneath a root directory that untrusted code could have written or replaced: a
// candidate's workspace (its records, its benchmark's JSON, its sources after a run), a
// scratch directory where a candidate's diff was applied.
//
// Whatever ran there may have replaced any file, or any directory on the way to it, by a
// symbolic link to a host file the sandbox hides, or by a FIFO. maxcode runs outside the
// sandbox, so it must never follow such a link nor block on such a file. Every path is
// resolved beneath the root with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
// RESOLVE_NO_MAGICLINKS) (where the kernel lacks openat2, ENOSYS, component by component
// with openat(O_NOFOLLOW | O_DIRECTORY)): a link anywhere below the root is an error, never
// a detour. Files are opened O_NONBLOCK and must be regular (fstat) and at most a given
// size. Errors name the path relative to the root and never carry the file's bytes.
//
// The root itself is maxcode's own directory (made by it, outside what the candidate can
// write): links in its own path are followed.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "runner/util/error.h"

namespace maxcode {

class BeneathError : public Error {
 public:
  enum class Kind {
    kLink,        // the file, or a directory on its path, is a symbolic link (or leaves the root)
    kNotRegular,  // a FIFO, a device, a socket, a directory where a file was expected
    kTooLarge,    // more bytes than the caller allows
    kMissing,     // not there (or a file stands where a directory should be)
    kIo,          // anything else the system refused
  };
  // what(): "<relative>: <what>", e.g. "build/out.json: build is a symbolic link, not followed".
  BeneathError(Kind kind, std::string relative, const std::string& what);
  Kind kind() const noexcept { return kind_; }
  // The path it is about, relative to the root, '/'-separated.
  const std::string& relative() const noexcept { return relative_; }

 private:
  Kind kind_;
  std::string relative_;
};

const char* to_string(BeneathError::Kind kind);

// `path` may be relative to `root`, or absolute and lexically inside it; a path that
// climbs out of the root (`..` above it, or absolute elsewhere) is a kLink error.

// The whole of a regular file beneath `root`, at most `max_bytes`. Throws BeneathError.
std::string read_beneath(const std::filesystem::path& root, const std::filesystem::path& path,
                         std::size_t max_bytes);

// An open descriptor (O_RDONLY | O_NONBLOCK | O_CLOEXEC) of the regular file `path`
// beneath `root`, for a caller that reads it its own way (hashing a large file); the
// caller closes it. Throws BeneathError as read_beneath does, without the size cap.
int open_file_beneath(const std::filesystem::path& root, const std::filesystem::path& path);

// What sits at `path` without following it, as lstat(2) would say, but with every
// directory on the way resolved beneath `root`: nullopt when it is not there. Throws
// BeneathError (kLink) when a directory on the way is a link.
std::optional<struct stat> lstat_beneath(const std::filesystem::path& root, const std::filesystem::path& path);

// The target text of the symbolic link at `path` (never followed). Throws BeneathError.
std::string read_link_beneath(const std::filesystem::path& root, const std::filesystem::path& path);

// One entry of a directory, as it is (a link is reported as a link, never followed).
struct BeneathEntry {
  enum class Kind { kFile, kDirectory, kLink, kOther };
  std::string name;
  Kind kind = Kind::kOther;
  struct stat st {};  // lstat of the entry
};

// The entries of the directory `path` beneath `root` ("" or "." for the root itself),
// sorted by name. Throws BeneathError: kLink when it or a directory on the way is a link,
// kMissing when it is not there, kNotRegular when it is not a directory.
std::vector<BeneathEntry> list_beneath(const std::filesystem::path& root, const std::filesystem::path& path = {});

// Removes `path` beneath `root` and everything under it, never following a link (a link
// is removed as a link) and never leaving the root. False, with `error` set, when
// something could not be removed (or a directory on the way is a link); true when
// nothing is left, which includes nothing having been there. Never throws.
bool remove_beneath(const std::filesystem::path& root, const std::filesystem::path& path, std::string* error = nullptr) noexcept;
// The whole of `root` and `root` itself, the same way (a workspace going away).
bool remove_tree(const std::filesystem::path& root, std::string* error = nullptr) noexcept;

// Creates the directory `path` beneath `root` and any missing parents, refusing a link
// on the way. Throws BeneathError.
void make_dirs_beneath(const std::filesystem::path& root, const std::filesystem::path& path);

// Writes `content` to `path` beneath `root` (created or truncated; its directories
// created), refusing a link on the way or at the file. Throws BeneathError.
void write_beneath(const std::filesystem::path& root, const std::filesystem::path& path, const std::string& content);

// For tests: resolve by the component-by-component walk even where openat2 exists.
void resolve_beneath_by_walk_for_tests(bool walk);

}  // namespace maxcode
