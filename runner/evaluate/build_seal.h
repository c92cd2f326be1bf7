// The seal on a workspace's build outputs: what a build step wrote, proven unchanged
// before and after every later run (tests, benchmarks, timing, tools), so that code run
// at test time cannot swap the built benchmark for a script that prints saved output.
//
// What is sealed: every file, and every symbolic link, that a build step (configure,
// build, a rebuild) created or changed in the workspace; not the sources (the
// snapshot's manifest proves those, workspace.h), not maxcode's own .maxcode-*
// directories (the sandbox's home, the call records, Google Benchmark's JSON: runs
// write there by design), and not the two logs ninja rewrites whenever it is invoked
// (.ninja_log, .ninja_deps), which a test command that goes through the build tool
// ("ninja test", "cmake --build . --target check") touches. Everything else the build
// made is sealed, whatever its kind: executables, libraries and objects, but also
// build.ninja / Makefiles, CTestTestfile.cmake and generated scripts or headers, which
// decide what a later test run or rebuild executes. Files the runs create themselves
// (ctest's logs, a benchmark's output files) were not made by a build and stay free.
//
// Each sealed file keeps its SHA-256 (OpenSSL), size and mode; a link its target.
// Verification re-hashes only what may have changed: a file whose inode, size, mode,
// mtime and ctime are all as sealed is unchanged, because no unprivileged process can
// set a ctime (the kernel stamps it with the current time on every write, chmod or
// rename). For that to hold across the seal, seal_build waits until the clock has
// moved past the newest sealed ctime, so that any later write stamps a different one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace maxcode {

// One entry's identity as lstat sees it.
struct FileStat {
  enum class Kind { kFile, kLink, kOther };
  Kind kind = Kind::kOther;
  std::uint64_t dev = 0, ino = 0, size = 0;
  unsigned mode = 0;  // permission bits (07777)
  std::int64_t mtime_ns = 0, ctime_ns = 0;
  bool operator==(const FileStat&) const = default;
};

struct SealedFile {
  FileStat stat;
  std::string sha256;  // hex, of the content (file) or of the link's target text (link)
};

// Relative path ('/' separators) -> what it was at the seal.
struct BuildSeal {
  std::map<std::string, SealedFile> files;
};

// Every file and link under `workspace` that a seal may cover (not following links,
// leaving out .maxcode-* at the top, ninja's logs and the paths in `excluded`).
std::map<std::string, FileStat> stat_tree(const std::filesystem::path& workspace,
                                          const std::set<std::string>& excluded);

// After a build step: `before` is stat_tree() from just before it, `previous` the seal
// the workspace had (empty for the first build). Entries new or changed since `before`
// are hashed and sealed; those of `previous` stay sealed (re-hashed where the build
// changed them, dropped where it removed them). Returns after the clock has passed the
// newest sealed ctime (at most some tens of milliseconds; see above).
BuildSeal seal_build(const std::filesystem::path& workspace, const std::map<std::string, FileStat>& before,
                     const BuildSeal& previous, const std::set<std::string>& excluded);

// One sealed entry that is not as it was.
struct SealBreak {
  std::string path;
  std::string what;  // "its content changed", "removed", "replaced by a symbolic link", "mode 0755 -> 0777"
};

// Every sealed entry of `workspace` that differs from `seal`, in path order.
std::vector<SealBreak> verify_seal(const std::filesystem::path& workspace, const BuildSeal& seal);

// "bench.bin (its content changed), build/CTestTestfile.cmake (removed)", the first
// `max_listed` of them and how many more.
std::string describe(const std::vector<SealBreak>& breaks, std::size_t max_listed = 5);

}  // namespace maxcode
