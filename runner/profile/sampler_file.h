// Reading the built-in sampler's profile file (runner/inject/sampler_writer.cc writes
// it; docs/profiling.md "Sampler file" documents it).
#pragma once

#include <filesystem>
#include <string_view>

#include "runner/profile/address_profile.h"

namespace maxcode {

// A file cut short (the process died while writing it) is read as far as it goes and
// marked truncated; a malformed line throws ProfileFormatError naming the line.
AddressProfile parse_sampler_file(std::string_view text, const std::string& label);
AddressProfile read_sampler_file(const std::filesystem::path& path);

}  // namespace maxcode
