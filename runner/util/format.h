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

}  // namespace maxcode
