// A few small cases against values worked out by hand.
#include <cmath>
#include <cstdio>
#include <vector>

#include "blur.h"

static int failures = 0;

static void check(const char* what, const std::vector<float>& image, int width, int height,
                  const std::vector<float>& want) {
  float *in = nullptr, *out = nullptr;
  cudaMalloc(&in, image.size() * sizeof(float));
  cudaMalloc(&out, image.size() * sizeof(float));
  cudaMemcpy(in, image.data(), image.size() * sizeof(float), cudaMemcpyHostToDevice);
  blur(in, out, width, height);
  std::vector<float> got(image.size());
  cudaMemcpy(got.data(), out, got.size() * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(in);
  cudaFree(out);
  for (size_t i = 0; i < want.size(); ++i)
    if (std::fabs(got[i] - want[i]) > 1e-5f * (1 + std::fabs(want[i]))) {
      std::printf("FAIL %s: pixel %zu = %g, expected %g\n", what, i, got[i], want[i]);
      ++failures;
      return;
    }
}

int main() {
  check("constant", std::vector<float>(20, 3.5f), 5, 4, std::vector<float>(20, 3.5f));
  check("one pixel", {2.0f}, 1, 1, {2.0f});
  std::vector<float> impulse(9, 0.0f);
  impulse[4] = 16.0f;
  check("impulse", impulse, 3, 3, {1, 2, 1, 2, 4, 2, 1, 2, 1});
  check("row", {0, 4, 8}, 3, 1, {1, 4, 7});
  if (failures == 0) std::printf("blur: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
