#include "runner/util/cpu_pressure.h"

#include <algorithm>
#include <charconv>

#include "runner/util/files.h"

namespace maxcode {

std::optional<double> parse_cpu_pressure(std::string_view text) {
  // "some avg10=0.02 avg60=3.47 avg300=6.83 total=7663142930" (total in microseconds)
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (!line.starts_with("some ")) continue;
    const std::size_t at = line.find(" total=");
    if (at == std::string_view::npos) return std::nullopt;
    const std::string_view digits = line.substr(at + 7);
    unsigned long long us = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), us);
    if (ec != std::errc() || ptr == digits.data()) return std::nullopt;
    return static_cast<double>(us) * 1e-6;
  }
  return std::nullopt;
}

std::optional<double> cpu_waited_s() {
  const std::optional<std::string> text = try_read_text("/proc/pressure/cpu");
  return text ? parse_cpu_pressure(*text) : std::nullopt;
}

std::optional<double> cpu_pressure(std::optional<double> before, std::optional<double> after, double wall_s) {
  if (!before || !after || wall_s <= 0) return std::nullopt;
  return std::clamp((*after - *before) / wall_s, 0.0, 1.0);
}

}  // namespace maxcode
