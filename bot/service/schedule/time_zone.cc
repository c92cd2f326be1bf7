#include "bot/service/schedule/time_zone.h"

#include <algorithm>
#include <fstream>
#include <iterator>

namespace maxcode::bot::service {

namespace {

std::int64_t be(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  if (bytes == 4) return static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
  return static_cast<std::int64_t>(v);
}

struct Header {
  std::int64_t isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt;
};

Header header_at(const std::vector<unsigned char>& d, std::size_t at, const std::string& name) {
  if (d.size() < at + 44 || d[at] != 'T' || d[at + 1] != 'Z' || d[at + 2] != 'i' || d[at + 3] != 'f')
    throw TimeZoneError("time zone " + name + ": not a TZif file");
  const unsigned char* c = d.data() + at + 20;
  return {be(c, 4), be(c + 4, 4), be(c + 8, 4), be(c + 12, 4), be(c + 16, 4), be(c + 20, 4)};
}

std::size_t body_size(const Header& h, int time_bytes) {
  return h.timecnt * time_bytes + h.timecnt + h.typecnt * 6 + h.charcnt + h.leapcnt * (time_bytes + 4) + h.isstdcnt +
         h.isutcnt;
}

}  // namespace

TimeZone TimeZone::utc() {
  TimeZone z;
  z.name_ = "UTC";
  return z;
}

TimeZone TimeZone::load(const std::string& name, const std::filesystem::path& database) {
  if (name == "UTC" || name == "Etc/UTC") return utc();
  // A zone name is a relative path of letters, digits and _-+/; never "..".
  if (name.empty() || name.find("..") != std::string::npos || name[0] == '/' ||
      !std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isalnum(c) || c == '_' || c == '-' || c == '+' || c == '/'; }))
    throw TimeZoneError("'" + name + "' is not a time zone name (like Europe/Berlin)");
  std::ifstream in(database / name, std::ios::binary);
  if (!in) throw TimeZoneError("unknown time zone '" + name + "' (not in " + database.string() + ")");
  std::vector<unsigned char> d((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Header h = header_at(d, 0, name);
  std::size_t at = 44;
  int time_bytes = 4;
  if (d[4] >= '2') {  // skip the 32-bit body to the 64-bit header and body
    at = 44 + body_size(h, 4);
    h = header_at(d, at, name);
    at += 44;
    time_bytes = 8;
  }
  if (d.size() < at + body_size(h, time_bytes) || h.typecnt == 0) throw TimeZoneError("time zone " + name + ": truncated file");
  TimeZone z;
  z.name_ = name;
  const unsigned char* times = d.data() + at;
  const unsigned char* indices = times + h.timecnt * time_bytes;
  const unsigned char* types = indices + h.timecnt;
  auto type_offset = [&](std::int64_t i) {
    if (i >= h.typecnt) throw TimeZoneError("time zone " + name + ": bad type index");
    return be(types + i * 6, 4);
  };
  z.initial_offset_ = type_offset(0);
  for (std::int64_t i = 0; i < h.timecnt; ++i) {
    z.transitions_.push_back(be(times + i * time_bytes, time_bytes));
    z.offsets_.push_back(type_offset(indices[i]));
  }
  return z;
}

std::int64_t TimeZone::offset_at(std::int64_t utc_seconds) const {
  auto it = std::upper_bound(transitions_.begin(), transitions_.end(), utc_seconds);
  if (it == transitions_.begin()) return initial_offset_;
  return offsets_[static_cast<std::size_t>(it - transitions_.begin() - 1)];
}

}  // namespace maxcode::bot::service
