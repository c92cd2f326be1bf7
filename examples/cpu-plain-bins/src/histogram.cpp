#include "histogram.h"

// One counter per byte value, incremented in input order. On runs of equal bytes each
// increment waits for the store of the one before it.
void histogram(const std::uint8_t* data, std::size_t n, std::uint32_t* bins) {
  for (int b = 0; b < 256; ++b) bins[b] = 0;
  for (std::size_t i = 0; i < n; ++i) bins[data[i]]++;
}
