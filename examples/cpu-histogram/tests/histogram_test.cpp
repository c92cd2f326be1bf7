// Checks histogram() against a plain count on awkward lengths and inputs.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "histogram.h"

static int failures = 0;

static void check(const std::vector<std::uint8_t>& data, std::size_t n, const char* what) {
  std::uint32_t expected[256] = {}, got[256];
  for (std::size_t i = 0; i < n; ++i) expected[data[i]]++;
  for (int b = 0; b < 256; ++b) got[b] = 0xdeadbeef;  // every bin must be written
  histogram(data.data(), n, got);
  for (int b = 0; b < 256; ++b)
    if (got[b] != expected[b]) {
      std::printf("FAIL %s: bin %d = %u, expected %u\n", what, b, got[b], expected[b]);
      ++failures;
      return;
    }
}

int main() {
  std::vector<std::uint8_t> data(1000);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 7 + i / 13);
  check(data, 0, "empty");
  for (std::size_t n : {1, 2, 3, 5, 7, 8, 9, 15, 17, 999, 1000}) check(data, n, "prefix");
  std::vector<std::uint8_t> same(777, 200);
  check(same, same.size(), "one value");
  std::vector<std::uint8_t> all(256 * 3);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint8_t>(i);
  check(all, all.size(), "every value");
  if (failures == 0) std::printf("histogram: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
