// Reading gperftools' legacy CPU profile (CPUPROFILE=file, ProfilerStart): a binary
// stream of machine words (header: 0, 3, 0, sampling period in microseconds, 0; then
// records: count, depth, depth addresses; trailer: 0, 1, 0) followed by the
// process's /proc/self/maps as text. Little-endian, 64- or 32-bit words.
#pragma once

#include <filesystem>
#include <string_view>

#include "runner/profile/address_profile.h"

namespace maxcode {

// A malformed stream throws ProfileFormatError naming the byte offset.
AddressProfile parse_pprof(std::string_view bytes, const std::string& label);
AddressProfile read_pprof(const std::filesystem::path& path);

// True when `bytes` starts like a legacy CPU profile.
bool looks_like_pprof(std::string_view bytes);

}  // namespace maxcode
