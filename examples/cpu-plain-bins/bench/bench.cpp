// Benchmark, written the way most projects write one: one input buffer, built once
// from MAXCODE_SEED, the target called 8 times on it with the same length and the same
// bins, and only the last result printed.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "histogram.h"

int main() {
  const char* seed_text = std::getenv("MAXCODE_SEED");
  std::uint64_t state = seed_text ? std::strtoull(seed_text, nullptr, 10) : 42;
  state = state * 0x9E3779B97F4A7C15ull + 1;
  auto next = [&state] {  // xorshift64*
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1Dull;
  };

  const std::size_t n = 16u << 20;
  std::vector<std::uint8_t> data(n);
  for (std::size_t i = 0; i < n;) {
    const std::uint64_t r = next();
    const std::size_t run = 1 + (r >> 8) % 32;  // runs of 1..32 equal bytes
    for (std::size_t k = 0; k < run && i < n; ++k) data[i++] = static_cast<std::uint8_t>(r);
  }

  std::uint32_t bins[256];
  for (int call = 0; call < 8; ++call) histogram(data.data(), n, bins);
  for (int b = 0; b < 256; ++b) std::printf("%u%c", bins[b], b % 16 == 15 ? '\n' : ' ');
  return 0;
}
