// Checks crc32() and block_checksums() against known values and against each other.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "checksum.h"

static int failures = 0;

static void expect(std::uint32_t got, std::uint32_t expected, const char* what) {
  if (got == expected) return;
  std::printf("FAIL %s: %08x, expected %08x\n", what, static_cast<unsigned>(got), static_cast<unsigned>(expected));
  ++failures;
}

int main() {
  const char* check = "123456789";  // the standard check value of CRC-32
  expect(crc32(reinterpret_cast<const std::uint8_t*>(check), std::strlen(check)), 0xCBF43926u, "crc32 check value");
  expect(crc32(nullptr, 0), 0u, "crc32 of nothing");

  std::vector<std::uint8_t> data(1000);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 131 + i / 7);
  for (std::size_t block : {1, 7, 64, 999, 1000, 4096}) {
    std::vector<std::uint32_t> out((data.size() + block - 1) / block, 0xdeadbeefu);
    block_checksums(data.data(), data.size(), block, out.data());
    for (std::size_t b = 0; b < out.size(); ++b) {
      const std::size_t begin = b * block, len = begin + block < data.size() ? block : data.size() - begin;
      expect(out[b], crc32(data.data() + begin, len), "block_checksums against crc32");
    }
  }
  if (failures == 0) std::printf("checksum: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
