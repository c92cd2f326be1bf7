// Where a measurement was taken: the facts a reader needs to judge a speedup.
#pragma once

#include <nlohmann/json.hpp>

#include "runner/util/process.h"

namespace maxcode {

// maxcode version, OS and kernel, CPU model and cores, compiler, isolation, time.
nlohmann::json describe_environment(Isolation isolation);

// Current UTC time as ISO 8601.
std::string utc_now();

}  // namespace maxcode
