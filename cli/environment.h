// The one place the process environment is read for configuration (runner/core/environment.h).
#pragma once

#include "runner/core/environment.h"

namespace maxcode {

// The variables maxcode reads, with their defaults applied.
Environment read_environment();

}  // namespace maxcode
