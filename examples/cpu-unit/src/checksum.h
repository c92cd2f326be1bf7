#pragma once

#include <cstddef>
#include <cstdint>

// CRC-32 (IEEE 802.3, reflected, as zlib computes it) of data[0, n).
std::uint32_t crc32(const std::uint8_t* data, std::size_t n);

// The CRC-32 of each block of `block` bytes (the last one may be shorter), into out[0, ceil(n / block)).
void block_checksums(const std::uint8_t* data, std::size_t n, std::size_t block, std::uint32_t* out);
