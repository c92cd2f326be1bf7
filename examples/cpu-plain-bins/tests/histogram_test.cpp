// An ordinary test: a few inputs against a plain count.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "histogram.h"

static int failures = 0;

static void check(const std::vector<std::uint8_t>& data, const char* what) {
  std::uint32_t expected[256] = {}, got[256];
  for (std::uint8_t v : data) expected[v]++;
  for (int b = 0; b < 256; ++b) got[b] = 12345;
  histogram(data.data(), data.size(), got);
  for (int b = 0; b < 256; ++b)
    if (got[b] != expected[b]) {
      std::printf("FAIL %s: bin %d = %u, expected %u\n", what, b, got[b], expected[b]);
      ++failures;
      return;
    }
}

int main() {
  check({}, "empty");
  check({7}, "one byte");
  check(std::vector<std::uint8_t>(1000, 255), "one value");
  std::vector<std::uint8_t> mixed(4099);
  for (std::size_t i = 0; i < mixed.size(); ++i) mixed[i] = static_cast<std::uint8_t>(i * 31 + i / 7);
  check(mixed, "mixed");
  if (failures == 0) std::printf("histogram: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
