#include "runner/util/files.h"

#include "runner/util/hex.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "runner/util/secrets.h"

namespace maxcode {

namespace fs = std::filesystem;

namespace {

// The file's bytes, or nullopt with the reason in `why`.
std::optional<std::string> read_all(const fs::path& path, std::string& why) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    why = "it is a directory";
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    why = std::strerror(errno);
    return std::nullopt;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace

std::string read_text(const fs::path& path) {
  std::string why;
  std::optional<std::string> text = read_all(path, why);
  if (!text) throw std::runtime_error("cannot read " + path.string() + ": " + why);
  return std::move(*text);
}

std::optional<std::string> try_read_text(const fs::path& path) {
  std::string why;
  return read_all(path, why);
}

void write_text_exact(const fs::path& path, const std::string& content) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  out.flush();
  if (!out) throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(errno));
}

void write_text(const fs::path& path, const std::string& content) {
  write_text_exact(path, redact_secrets(content));
}

void copy_tree(const fs::path& from, const fs::path& to,
               const std::vector<std::string>& skip_top_level) {
  fs::create_directories(to);
  for (const auto& entry : fs::directory_iterator(from)) {
    const std::string name = entry.path().filename().string();
    if (std::find(skip_top_level.begin(), skip_top_level.end(), name) != skip_top_level.end())
      continue;
    fs::copy(entry.path(), to / name,
             fs::copy_options::recursive | fs::copy_options::copy_symlinks |
                 fs::copy_options::overwrite_existing);
  }
}

std::vector<std::string> list_files(const fs::path& root) {
  std::vector<std::string> files;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    if (it->is_directory() && it->path().filename() == ".git") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && !it->is_symlink())
      files.push_back(fs::relative(it->path(), root).generic_string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

fs::path make_unique_dir(const fs::path& parent, const std::string& prefix) {
  fs::create_directories(parent);
  std::string pattern = (parent / (prefix + "XXXXXX")).string();
  if (!mkdtemp(pattern.data()))
    throw std::runtime_error("cannot create a directory in " + parent.string() + ": " +
                             std::strerror(errno));
  return pattern;
}

std::string sha256_hex(const std::string& data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("SHA-256 failed");
  return to_hex(digest, length);
}

bool escapes_root(std::string_view relative) {
  if (relative.empty()) return false;
  if (relative.front() == '/') return true;
  long depth = 0;
  std::size_t start = 0;
  while (start <= relative.size()) {
    const std::size_t slash = std::min(relative.find('/', start), relative.size());
    const std::string_view part = relative.substr(start, slash - start);
    start = slash + 1;
    if (part.empty() || part == ".") continue;
    depth += part == ".." ? -1 : 1;
    if (depth < 0) return true;
  }
  return false;
}

bool resolves_inside(const fs::path& root, const fs::path& path) {
  std::error_code ec;
  const fs::path real_root = fs::weakly_canonical(root, ec);
  if (ec) return false;
  const fs::path real = fs::weakly_canonical(path, ec);
  if (ec) return false;
  const fs::path inside = real.lexically_relative(real_root);
  return !inside.empty() && *inside.begin() != "..";
}

}  // namespace maxcode
