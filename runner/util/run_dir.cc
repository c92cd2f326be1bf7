#include "runner/util/run_dir.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include "runner/util/files.h"

namespace maxcode {

namespace fs = std::filesystem;

namespace {

// Field 22 of /proc/PID/stat: when the process started, in clock ticks since boot.
// Empty when there is no such process.
std::string start_time(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return "";
  // The command name (field 2) may hold spaces and parentheses: fields after it start
  // after its last ')'.
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return "";
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 22) return field;
  }
  return "";
}

}  // namespace

fs::path make_run_dir(const fs::path& parent, const std::string& prefix) {
  const fs::path dir = make_unique_dir(parent, prefix);
  const long pid = static_cast<long>(getpid());
  std::ofstream(dir / "owner") << pid << " " << start_time(pid) << "\n";
  return dir;
}

int remove_abandoned_run_dirs(const fs::path& parent, const std::string& prefix) {
  int removed = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || !entry.is_directory(ec) || entry.is_symlink(ec)) continue;
    std::ifstream owner(entry.path() / "owner");
    long pid = 0;
    std::string started;
    if (!(owner >> pid >> started) || pid <= 0) continue;
    if (start_time(pid) == started) continue;  // still running
    std::error_code ignored;
    if (fs::remove_all(entry.path(), ignored) > 0 && !ignored) ++removed;
  }
  return removed;
}

}  // namespace maxcode
