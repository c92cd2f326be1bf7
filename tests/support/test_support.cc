#include "support/test_support.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "runner/util/process.h"

namespace maxcode::testing {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "maxcode-test-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  // MAXCODE_KEEP_TEST_DIRS=1 keeps what a test made (reports, trend pages) to look at.
  if (const char* keep = std::getenv("MAXCODE_KEEP_TEST_DIRS"); keep && std::string(keep) == "1") {
    std::fprintf(stderr, "kept %s\n", path_.c_str());
    return;
  }
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

void write_file(const std::filesystem::path& path, const std::string& content) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

namespace {

namespace fs = std::filesystem;

// The directory of the running test program: build/tests/ in a build tree, and where a
// bundle (scripts/gpu-bundle.sh) puts it on another machine.
fs::path program_dir() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : self.parent_path();
}

}  // namespace

std::filesystem::path source_path(const std::string& relative) {
  // Found at run time, so that a test program copied to another machine (the GPU
  // runners) works from any directory: the variable, else the nearest ancestor of the
  // program that holds `relative` (build/tests/.. is the checkout), else the tree this
  // program was built from.
  if (const char* dir = std::getenv("MAXCODE_SOURCE_DIR"); dir && *dir) return fs::path(dir) / relative;
  std::error_code ec;
  for (fs::path dir = program_dir(); !dir.empty(); dir = dir.parent_path()) {
    if (fs::exists(dir / relative, ec)) return dir / relative;
    if (dir == dir.root_path()) break;
  }
  return fs::path(MAXCODE_SOURCE_DIR) / relative;
}

std::filesystem::path maxcode_binary() {
  if (const char* binary = std::getenv("MAXCODE_BINARY"); binary && *binary) return binary;
  std::error_code ec;
  const fs::path beside = program_dir().parent_path() / "maxcode";  // build/tests/.. = build/
  if (!program_dir().empty() && fs::exists(beside, ec)) return beside;
  return MAXCODE_BINARY_PATH;
}

bool have_gpu() {
  Command probe;
  probe.shell = "nvidia-smi -L";
  probe.timeout_s = 30;
  Outcome o = run(probe);
  return o.ok() && o.out.find("GPU ") != std::string::npos;
}

}  // namespace maxcode::testing
