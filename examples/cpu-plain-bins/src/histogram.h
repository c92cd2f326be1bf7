#pragma once
#include <cstddef>
#include <cstdint>

// Counts each byte value of data[0..n) into bins[0..256); every bin is written.
void histogram(const std::uint8_t* data, std::size_t n, std::uint32_t* bins);
