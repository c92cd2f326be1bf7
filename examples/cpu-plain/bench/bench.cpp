// Benchmark, written the way most projects write one: one image, the same buffers on
// every call, and a summary of the last result printed at the end.
#include <cstdio>
#include <vector>

#include "blur.h"

int main() {
  const int width = 1024, height = 1024;
  std::vector<float> in(static_cast<std::size_t>(width) * height), out(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>((i * 37) % 101) / 7.0f;

  for (int call = 0; call < 40; ++call) blur(in.data(), out.data(), width, height);

  double checksum = 0;
  for (float v : out) checksum += v;
  std::printf("checksum %.6e\n", checksum);
  std::printf("center %.6e\n", out[(height / 2) * width + width / 2]);
  return 0;
}
