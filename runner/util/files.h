// Small file-system utilities used across the engine.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace maxcode {

// Whole-file reads and writes; both throw std::runtime_error naming the path.
// write_text writes `content` redacted of every secret this process holds (secrets.h):
// it is how reports, results and checkpoints reach the disk.
std::string read_text(const std::filesystem::path& path);
// The same read for a file that may be missing or is the caller's to explain (a config
// or key file named in its own error): nullopt where read_text would throw. A directory
// counts as unreadable in both; opened as a file it would read as empty.
std::optional<std::string> try_read_text(const std::filesystem::path& path);
void write_text(const std::filesystem::path& path, const std::string& content);
// A file that untrusted code may have written or replaced (a candidate's records, its
// sources after a run) is never read with these: util/beneath.h reads it beneath its
// workspace without following a link.
// Byte for byte: a candidate's sources in its workspace, which must match their hashes
// (they stay inside the sandbox; nothing read from there leaves unredacted).
void write_text_exact(const std::filesystem::path& path, const std::string& content);

// Copies the tree at `from` into `to` (created), skipping top-level entries named in
// `skip_top_level`. Symlinks are copied as links, never followed.
void copy_tree(const std::filesystem::path& from, const std::filesystem::path& to,
               const std::vector<std::string>& skip_top_level = {});

// Every regular file under `root`, as paths relative to it with '/' separators,
// sorted. Skips `.git`.
std::vector<std::string> list_files(const std::filesystem::path& root);

// A new empty directory `<parent>/<prefix>XXXXXX`.
std::filesystem::path make_unique_dir(const std::filesystem::path& parent,
                                      const std::string& prefix);

// Whether `relative`, a path that names something inside a root folder (a project
// file in a clone, a replay directory), can leave it: absolute, or a `..` that climbs
// above the root once `.` and `name/..` are resolved. Looks at the text only; a
// symbolic link inside the root is found by resolves_inside().
bool escapes_root(std::string_view relative);
// Whether `path`, once every symbolic link is resolved, lies inside `root` (or is it).
// False where either cannot be resolved; never throws.
bool resolves_inside(const std::filesystem::path& root, const std::filesystem::path& path);

// Lowercase hex SHA-256 (OpenSSL).
std::string sha256_hex(const std::string& data);

}  // namespace maxcode
