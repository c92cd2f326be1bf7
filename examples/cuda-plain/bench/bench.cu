// Benchmark, written the way most projects write one: one image, the same device
// buffers on every call, and a checksum of the last result printed at the end.
#include <cstdio>
#include <vector>

#include "blur.h"

int main() {
  const int width = 4096, height = 2048;
  const size_t n = static_cast<size_t>(width) * height;
  std::vector<float> host(n);
  for (size_t i = 0; i < n; ++i) host[i] = static_cast<float>((i * 37) % 101) / 7.0f;
  float *in = nullptr, *out = nullptr;
  cudaMalloc(&in, n * sizeof(float));
  cudaMalloc(&out, n * sizeof(float));
  cudaMemcpy(in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);

  for (int call = 0; call < 20; ++call) blur(in, out, width, height);
  cudaDeviceSynchronize();

  cudaMemcpy(host.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost);
  double checksum = 0;
  for (float v : host) checksum += v;
  std::printf("checksum %.6e\n", checksum);
  cudaFree(in);
  cudaFree(out);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
