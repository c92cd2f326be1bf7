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

// Path of a file in the source tree (tests/fixtures/..., examples/...), found at run
// time: $MAXCODE_SOURCE_DIR, else the nearest ancestor directory of the test program
// that holds it, else the tree the program was built from.
std::filesystem::path source_path(const std::string& relative);

// The maxcode program: $MAXCODE_BINARY, else build/maxcode beside build/tests/, else the
// one this program was built with.
std::filesystem::path maxcode_binary();

// Whether this machine has an NVIDIA GPU (`nvidia-smi -L` lists one): GPU tests skip
// without it.
bool have_gpu();

}  // namespace maxcode::testing
