// The limits of workspace.max_processes, max_memory_mb, max_disk_mb and max_cpu_s, put on a command
// that runs the user's or a candidate's code (a build, the tests, a benchmark, a profile).
#pragma once

#include "runner/core/config.h"
#include "runner/util/process.h"

namespace maxcode {

void apply_workspace_limits(Command& command, const WorkspaceConfig& workspace);

// Half of the machine's memory: max_memory_mb's default (0 in the config).
std::size_t default_memory_limit_bytes();

}  // namespace maxcode
