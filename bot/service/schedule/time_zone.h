// UTC offsets of an IANA time zone, read from the system's compiled tz database
// (/usr/share/zoneinfo, TZif version 2 or later, 64-bit section). Debian ships the
// "fat" files, whose transitions run to 2037; after the last one the last offset holds.
// (GCC 12's <chrono> has no time-zone database; Debian has no C++ library for it.)
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "runner/util/error.h"

namespace maxcode::bot::service {

class TimeZoneError : public Error {
 public:
  using Error::Error;
};

class TimeZone {
 public:
  // "UTC", "Europe/Berlin", ... Throws TimeZoneError for an unknown or unreadable zone.
  static TimeZone load(const std::string& name,
                       const std::filesystem::path& database = "/usr/share/zoneinfo");
  static TimeZone utc();
  // Seconds east of UTC in effect at `utc_seconds`.
  std::int64_t offset_at(std::int64_t utc_seconds) const;
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::vector<std::int64_t> transitions_;  // sorted, UTC seconds
  std::vector<std::int64_t> offsets_;      // offset from each transition on
  std::int64_t initial_offset_ = 0;        // before the first transition
};

}  // namespace maxcode::bot::service
