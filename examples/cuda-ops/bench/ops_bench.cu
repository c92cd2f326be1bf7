// The project's benchmark: a few steps of a tiny model layer (y += alpha * x, then
// scores = softmax(a * b) row by row), on inputs made from MAXCODE_SEED. It prints a
// checksum and a sample of every output, so that a faster version can be checked
// against the original's numbers, and its own CUDA-event time on stderr.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ops.h"

#define CHECK(call)                                                                  \
  do {                                                                               \
    cudaError_t err = (call);                                                        \
    if (err != cudaSuccess) {                                                        \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err)); \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

namespace {

unsigned long long seed_from_env() {
  const char* text = std::getenv("MAXCODE_SEED");
  return text && *text ? std::strtoull(text, nullptr, 10) : 1;
}

// Values in [-1, 1) from a 64-bit LCG: the same on every machine for one seed.
std::vector<float> random_values(size_t count, unsigned long long& state) {
  std::vector<float> values(count);
  for (auto& v : values) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = static_cast<float>((state >> 40) & 0xFFFFFF) / 8388608.0f - 1.0f;
  }
  return values;
}

void print_output(const char* name, const std::vector<float>& values) {
  double sum = 0;
  for (float v : values) sum += v;
  std::printf("%s checksum %.9g\n%s sample", name, sum, name);
  for (size_t i = 0; i < values.size(); i += values.size() / 16 + 1) std::printf(" %.9g", values[i]);
  std::printf("\n");
}

}  // namespace

int main() {
  const int m = 1024, n = 1024, k = 1024, steps = 10;
  const int vector_n = 1 << 22;
  unsigned long long state = seed_from_env();
  const std::vector<float> a = random_values(static_cast<size_t>(m) * k, state);
  const std::vector<float> b = random_values(static_cast<size_t>(k) * n, state);
  const std::vector<float> x = random_values(vector_n, state);
  const std::vector<float> y0 = random_values(vector_n, state);

  float *da, *db, *dc, *dx, *dy;
  CHECK(cudaMalloc(&da, a.size() * sizeof(float)));
  CHECK(cudaMalloc(&db, b.size() * sizeof(float)));
  CHECK(cudaMalloc(&dc, static_cast<size_t>(m) * n * sizeof(float)));
  CHECK(cudaMalloc(&dx, x.size() * sizeof(float)));
  CHECK(cudaMalloc(&dy, y0.size() * sizeof(float)));
  CHECK(cudaMemcpy(da, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dx, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dy, y0.data(), y0.size() * sizeof(float), cudaMemcpyHostToDevice));
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));

  CHECK(cudaEventRecord(start, stream));
  for (int step = 0; step < steps; ++step) {
    axpy(0.5f, dx, dy, vector_n, stream);
    matmul(da, db, dc, m, n, k, stream);
    softmax_rows(dc, m, n, stream);
  }
  CHECK(cudaEventRecord(stop, stream));
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaGetLastError());
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  std::fprintf(stderr, "ops_bench: %d steps in %.3f ms (CUDA events)\n", steps, ms);

  std::vector<float> c(static_cast<size_t>(m) * n), y(vector_n);
  CHECK(cudaMemcpy(c.data(), dc, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(y.data(), dy, y.size() * sizeof(float), cudaMemcpyDeviceToHost));
  print_output("scores", c);
  print_output("y", y);
  for (float* p : {da, db, dc, dx, dy}) CHECK(cudaFree(p));
  return 0;
}
