#include "runner/instrument/inject_paths.h"

#include <mutex>

namespace maxcode {

namespace fs = std::filesystem;

namespace {

std::mutex inject_dir_mutex;
fs::path& inject_dir() {
  static fs::path dir;
  return dir;
}

}  // namespace

void set_inject_dir(const fs::path& dir) {
  std::lock_guard lock(inject_dir_mutex);
  inject_dir() = dir;
}

InjectLibraries find_inject_libraries() {
  InjectLibraries found;
  {
    std::lock_guard lock(inject_dir_mutex);
    if (!inject_dir().empty()) found.searched.push_back(inject_dir());
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path dir = exe.parent_path();
    for (const fs::path& candidate : {dir / "lib", dir, dir.parent_path() / "lib", dir.parent_path() / "lib" / "maxcode"})
      found.searched.push_back(candidate);
  }
  for (const auto& dir : found.searched) {
    if (found.sampler.empty() && fs::is_regular_file(dir / "libmaxcode_sampler.so", ec))
      found.sampler = dir / "libmaxcode_sampler.so";
    if (found.cupti.empty() && fs::is_regular_file(dir / "libmaxcode_cupti.so", ec))
      found.cupti = dir / "libmaxcode_cupti.so";
    if (found.shim.empty() && fs::is_regular_file(dir / "libmaxcode_shim.so", ec))
      found.shim = dir / "libmaxcode_shim.so";
  }
  return found;
}

std::string copy_into_work_dir(const std::filesystem::path& library, const std::filesystem::path& work_dir) {
  const std::filesystem::path dir = work_dir / "inject";
  std::filesystem::create_directories(dir);
  const std::filesystem::path copy = dir / library.filename();
  std::filesystem::copy_file(library, copy, std::filesystem::copy_options::overwrite_existing);
  return copy.string();
}

}  // namespace maxcode
