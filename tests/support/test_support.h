// Helpers shared by the tests: temporary directories and files.
#pragma once

#include <filesystem>
#include <string>

namespace maxcode::testing {

// A fresh directory under the system temp dir, removed with everything in it when the
// object goes away.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& child) const { return path_ / child; }

 private:
  std::filesystem::path path_;
};

void write_file(const std::filesystem::path& path, const std::string& content);
std::string read_file(const std::filesystem::path& path);

// Path of a file in the source tree (tests/fixtures/..., examples/...).
std::filesystem::path source_path(const std::string& relative);

}  // namespace maxcode::testing
