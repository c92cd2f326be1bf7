// The one place the process environment is read for configuration (runner/core/environment.h).
#pragma once

#include "runner/core/environment.h"

namespace maxcode {

// The variables maxcode reads, with their defaults applied.
Environment read_environment();

// The variables that set facts of the whole process, handed to the code they configure
// before any command runs: MAXCODE_ISOLATION (runner/util/process.h force_isolation) and
// MAXCODE_INJECT_DIR (runner/instrument/inject_paths.h set_inject_dir).
void apply_process_environment();

}  // namespace maxcode
