// Benchmark: block checksums of 16 MiB of bytes. The input comes from MAXCODE_SEED, and
// the checksums are printed in decimal (every 64th block, and a sum over all of them) so that
// maxcode can check a rewrite against the original output.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "checksum.h"

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

  const std::size_t n = (16u << 20) - 123;  // the last block is a short one
  const std::size_t block = 4096;
  std::vector<std::uint8_t> data(n);
  for (std::size_t i = 0; i < n; ++i) data[i] = static_cast<std::uint8_t>(next() >> 56);

  std::vector<std::uint32_t> sums((n + block - 1) / block);
  block_checksums(data.data(), n, block, sums.data());
  std::uint64_t total = 0;
  for (std::size_t b = 0; b < sums.size(); ++b) {
    total += sums[b];
    if (b % 64 == 0 || b + 1 == sums.size()) std::printf("block %zu: %u\n", b, static_cast<unsigned>(sums[b]));
  }
  std::printf("sum: %llu\n", static_cast<unsigned long long>(total));
  return 0;
}
