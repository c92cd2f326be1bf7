// Benchmark: histograms of a 16 MiB buffer of byte runs, 8 times over. The input comes
// from MAXCODE_SEED, and the bins are printed so that maxcode can check a rewrite
// against the original output.
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
    const std::size_t run = 1 + (r >> 8) % 64;  // runs of 1..64 equal bytes
    for (std::size_t k = 0; k < run && i < n; ++k) data[i++] = static_cast<std::uint8_t>(r);
  }

  std::uint32_t bins[256];
  std::uint64_t total[256] = {};
  for (int repeat = 0; repeat < 8; ++repeat) {
    histogram(data.data(), n - repeat, bins);  // lengths not a multiple of the lane count
    for (int b = 0; b < 256; ++b) total[b] += bins[b];
  }
  for (int b = 0; b < 256; ++b) std::printf("%llu%c", static_cast<unsigned long long>(total[b]), b % 16 == 15 ? '\n' : ' ');
  return 0;
}
