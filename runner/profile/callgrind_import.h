// Reading callgrind output (valgrind --tool=callgrind: callgrind.out.PID). Cost lines
// give each function's self cost per source line (the first event, normally Ir);
// `calls=` lines count calls, and the cost line after one is the call's inclusive
// cost, which is not self cost. Name compression ("fn=(12) name", then "fn=(12)")
// and relative positions ("+3", "-1", "*") are understood.
#pragma once

#include <filesystem>
#include <string_view>

#include "runner/profile/address_profile.h"
#include "runner/profile/call_stacks.h"

namespace maxcode {

// Throws ProfileFormatError naming the line on malformed input.
CallStacks parse_callgrind(std::string_view text, const std::string& label);
CallStacks read_callgrind(const std::filesystem::path& path);

}  // namespace maxcode
