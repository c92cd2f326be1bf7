#include "histogram.h"

#include <cstring>

// Runs of equal bytes (flat image regions, padding, RLE-friendly data) make each
// increment wait for the store of the one before it. Counting into several
// independent sub-histograms ("lanes") breaks that chain; how many pays off depends on
// the machine, so maxcode tunes it.
#define LANES 1  // maxcode: tune LANES 1 2 4 8

void histogram(const std::uint8_t* data, std::size_t n, std::uint32_t* bins) {
  std::uint32_t counts[LANES][256];
  std::memset(counts, 0, sizeof counts);
  std::size_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int lane = 0; lane < LANES; ++lane) counts[lane][data[i + lane]]++;
  for (; i < n; ++i) counts[0][data[i]]++;
  for (int b = 0; b < 256; ++b) {
    std::uint32_t sum = 0;
    for (int lane = 0; lane < LANES; ++lane) sum += counts[lane][b];
    bins[b] = sum;
  }
}
