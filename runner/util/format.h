// Number formatting shared by reports, critiques and prompts.
#pragma once

#include <cstdio>
#include <string>

namespace maxcode {

// `value` with `digits` decimals ("1.66"), the way every report prints speedups.
inline std::string fixed(double value, int digits = 2) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

// printf-style: numbers into a pattern ("%.3fx", "%.1f%%", "%.0f ms"), for the many
// places that print measurements. Up to 255 characters; longer output is cut.
template <typename... Numbers>
std::string format_numbers(const char* pattern, Numbers... numbers) {
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, pattern, numbers...);
  return buffer;
}

// A share as a percentage with one decimal: 0.123 -> "12.3%". Profiles, targets and
// job reports say how much of the time a function takes this way.
inline std::string format_percent(double share) { return format_numbers("%.1f%%", share * 100); }

// A duration with three significant digits in the unit that suits it: "2.5 s",
// "12.1 ms", "20 µs", "850 ns". For verdict reasons, reports and PR bodies alike.
inline std::string format_duration(double seconds) {
  if (seconds >= 1) return format_numbers("%.3g s", seconds);
  if (seconds >= 1e-3) return format_numbers("%.3g ms", seconds * 1e3);
  if (seconds >= 1e-6) return format_numbers("%.3g µs", seconds * 1e6);
  return format_numbers("%.3g ns", seconds * 1e9);
}

}  // namespace maxcode
