#include "runner/core/command_limits.h"

#include <unistd.h>

namespace maxcode {

std::size_t default_memory_limit_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) / 2;
}

void apply_workspace_limits(Command& command, const WorkspaceConfig& workspace) {
  command.max_processes = workspace.max_processes;
  command.max_memory_bytes =
      workspace.max_memory_mb > 0 ? workspace.max_memory_mb << 20 : default_memory_limit_bytes();
  command.max_disk_bytes = workspace.max_disk_mb << 20;
  command.max_cpu_s = workspace.max_cpu_s;
  command.limit_settings = {"workspace.max_processes", "workspace.max_memory_mb", "workspace.max_cpu_s",
                            "workspace.max_disk_mb"};
}

}  // namespace maxcode
