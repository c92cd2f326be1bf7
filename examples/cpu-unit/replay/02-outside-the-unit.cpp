// Also redefines crc32(), which block_checksums does not call: it is outside the unit,
// so the candidate is rejected before anything is built.
std::uint32_t crc32(const std::uint8_t* data, std::size_t n) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < n; ++i) crc = crc32_byte(crc, data[i]);
  return ~crc;
}

void block_checksums(const std::uint8_t* data, std::size_t n, std::size_t block, std::uint32_t* out) {
  for (std::size_t begin = 0, b = 0; begin < n; begin += block, ++b) {
    const std::size_t end = begin + block < n ? begin + block : n;
    std::uint32_t crc = 0xFFFFFFFFu;
    for (std::size_t i = begin; i < end; ++i) crc = crc32_byte(crc, data[i]);
    out[b] = ~crc;
  }
}
