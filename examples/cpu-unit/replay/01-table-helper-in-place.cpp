#include <array>

// A new helper: the CRC table, computed at compile time.
static constexpr std::array<std::uint32_t, 256> make_crc_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    table[i] = c;
  }
  return table;
}

// crc32_byte rewritten in place, under its own name: one table lookup instead of eight
// shift-and-xor steps per byte. block_checksums (the target) stays as it is.
static std::uint32_t crc32_byte(std::uint32_t crc, std::uint8_t byte) {
  static constexpr std::array<std::uint32_t, 256> table = make_crc_table();
  return (crc >> 8) ^ table[(crc ^ byte) & 0xFFu];
}
