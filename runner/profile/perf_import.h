// Reading `perf script` text: a header line per sample ("comm pid [cpu] time: period
// event:"), then its call chain, one frame a line ("  55d5c1a0b1e9 hot+0x49
// (/path/bench)"), innermost first, ended by a blank line. Frames keep the names perf
// resolved; a "file:line" line after a frame (perf script -F +srcline) gives its line.
#pragma once

#include <filesystem>
#include <string_view>

#include "runner/profile/address_profile.h"
#include "runner/profile/call_stacks.h"

namespace maxcode {

// Throws ProfileFormatError naming the line for a line that is neither. Samples of an
// event other than the first are left out, with a warning. Weights are the sample
// periods (ns for cpu-clock and task-clock), else 1 per sample.
CallStacks parse_perf_script(std::string_view text, const std::string& label);
CallStacks read_perf_script(const std::filesystem::path& path);

}  // namespace maxcode
