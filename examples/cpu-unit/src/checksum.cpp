#include "checksum.h"

// One byte into the CRC, bit by bit: eight dependent shift-and-xor steps per byte. Slow,
// and the hot loop of block_checksums spends its time here.
static std::uint32_t crc32_byte(std::uint32_t crc, std::uint8_t byte) {
  crc ^= byte;
  for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  return crc;
}

std::uint32_t crc32(const std::uint8_t* data, std::size_t n) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < n; ++i) crc = crc32_byte(crc, data[i]);
  return crc ^ 0xFFFFFFFFu;
}

void block_checksums(const std::uint8_t* data, std::size_t n, std::size_t block, std::uint32_t* out) {
  for (std::size_t begin = 0, b = 0; begin < n; begin += block, ++b) {
    const std::size_t end = begin + block < n ? begin + block : n;
    std::uint32_t crc = 0xFFFFFFFFu;
    for (std::size_t i = begin; i < end; ++i) crc = crc32_byte(crc, data[i]);
    out[b] = crc ^ 0xFFFFFFFFu;
  }
}
