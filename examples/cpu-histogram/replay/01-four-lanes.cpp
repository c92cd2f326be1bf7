// Hand-written: four explicit sub-histograms, unrolled.
void histogram(const std::uint8_t* data, std::size_t n, std::uint32_t* bins) {
  std::uint32_t c0[256] = {}, c1[256] = {}, c2[256] = {}, c3[256] = {};
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    c0[data[i]]++;
    c1[data[i + 1]]++;
    c2[data[i + 2]]++;
    c3[data[i + 3]]++;
  }
  for (; i < n; ++i) c0[data[i]]++;
  for (int b = 0; b < 256; ++b) bins[b] = c0[b] + c1[b] + c2[b] + c3[b];
}
