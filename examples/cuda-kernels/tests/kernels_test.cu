// Checks transpose, reduce_sum and stencil5 on the GPU against plain CPU code, on sizes
// that are not multiples of any block or tile size. Every output starts as NaN (0xFF
// bytes), so an element that is not written fails. Small sizes only: this also runs
// under compute-sanitizer.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#include "kernels.h"

namespace {

int failures = 0;
cudaStream_t stream;
// Every buffer stays allocated until the end, so no two cases share an address.
std::vector<void*> buffers;

#define CUDA_CHECK(call)                                                                        \
  do {                                                                                          \
    const cudaError_t e_ = (call);                                                              \
    if (e_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                             \
    }                                                                                           \
  } while (0)

template <typename T>
T* device_alloc(std::size_t count) {
  void* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, count * sizeof(T) + 16));  // never zero bytes
  buffers.push_back(p);
  return static_cast<T*>(p);
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Multiples of 2^-23 in [-1, 1), as in the benchmark.
std::vector<float> random_values(std::size_t n, std::uint64_t key) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(static_cast<double>(splitmix64(key * 0x100000001ull + i) >> 40) / 8388608.0 - 1.0);
  return v;
}

void finish_call(const char* what) {
  const cudaError_t launch = cudaGetLastError();
  if (launch != cudaSuccess) {
    std::fprintf(stderr, "%s: launch failed: %s\n", what, cudaGetErrorString(launch));
    std::exit(1);
  }
  const cudaError_t run = cudaStreamSynchronize(stream);
  if (run != cudaSuccess) {
    std::fprintf(stderr, "%s: kernel failed: %s\n", what, cudaGetErrorString(run));
    std::exit(1);
  }
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void check_transpose(int rows, int cols) {
  const std::size_t n = static_cast<std::size_t>(rows) * cols;
  const std::vector<float> in = random_values(n, 1000003ull * rows + cols);
  float* d_in = device_alloc<float>(n);
  float* d_out = device_alloc<float>(n);
  CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_out, 0xFF, n * sizeof(float)));
  CUDA_CHECK(cudaDeviceSynchronize());  // setup done before the call, whatever stream it uses
  transpose(d_in, d_out, rows, cols, stream);
  finish_call("transpose");
  std::vector<float> out(n);
  CUDA_CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const float want = in[static_cast<std::size_t>(r) * cols + c];
      const float got = out[static_cast<std::size_t>(c) * rows + r];
      if (!same_bits(got, want)) {
        std::printf("FAIL transpose %dx%d: out[%d][%d] = %.9g, expected in[%d][%d] = %.9g\n", rows, cols, c, r, got, r, c,
                    want);
        ++failures;
        return;
      }
    }
}

void check_stencil(int rows, int cols) {
  const std::size_t n = static_cast<std::size_t>(rows) * cols;
  const std::vector<float> in = random_values(n, 2000003ull * rows + cols);
  float* d_in = device_alloc<float>(n);
  float* d_out = device_alloc<float>(n);
  CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_out, 0xFF, n * sizeof(float)));
  CUDA_CHECK(cudaDeviceSynchronize());  // setup done before the call, whatever stream it uses
  stencil5(d_in, d_out, rows, cols, stream);
  finish_call("stencil5");
  std::vector<float> out(n);
  CUDA_CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const std::size_t i = static_cast<std::size_t>(r) * cols + c;
      float want;
      if (r == 0 || c == 0 || r == rows - 1 || c == cols - 1) {
        want = in[i];
      } else {
        const float sum = in[i] + in[i - cols] + in[i + cols] + in[i - 1] + in[i + 1];  // float, left to right
        want = 0.2f * sum;
      }
      if (!same_bits(out[i], want)) {
        std::printf("FAIL stencil5 %dx%d: out[%d][%d] = %.9g, expected %.9g\n", rows, cols, r, c, out[i], want);
        ++failures;
        return;
      }
    }
}

// `misalign`: pass a pointer one float past a 256-byte boundary.
void check_reduce(int n, bool misalign) {
  const std::vector<float> in = random_values(static_cast<std::size_t>(n), 3000017ull + n);
  float* base = device_alloc<float>(static_cast<std::size_t>(n) + 1);
  float* d_in = base + (misalign ? 1 : 0);
  double* d_out = device_alloc<double>(1);
  if (n > 0) CUDA_CHECK(cudaMemcpy(d_in, in.data(), static_cast<std::size_t>(n) * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_out, 0xFF, sizeof(double)));
  CUDA_CHECK(cudaDeviceSynchronize());  // setup done before the call, whatever stream it uses
  reduce_sum(d_in, n, d_out, stream);
  finish_call("reduce_sum");
  double got = 0;
  CUDA_CHECK(cudaMemcpy(&got, d_out, sizeof(double), cudaMemcpyDeviceToHost));
  double want = 0, magnitude = 0;
  for (float x : in) {
    want += x;  // exact: the values are multiples of 2^-23 and n < 2^30
    magnitude += std::fabs(x);
  }
  if (!(std::fabs(got - want) <= 1e-9 * magnitude)) {
    std::printf("FAIL reduce_sum n=%d%s: %.17g, expected %.17g\n", n, misalign ? " (misaligned)" : "", got, want);
    ++failures;
  }
}

}  // namespace

int main() {
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  const int shapes[][2] = {{1, 1},   {1, 7},    {7, 1},    {2, 3},     {31, 33},  {33, 67},
                           {64, 64}, {1000, 1}, {1, 1000}, {129, 255}, {517, 1031}, {1031, 517}};
  for (const auto& s : shapes) check_transpose(s[0], s[1]);
  for (const auto& s : shapes) check_stencil(s[0], s[1]);
  for (int n : {0, 1, 2, 3, 31, 33, 1000, 4097, 65537, 300001}) {
    check_reduce(n, false);
    check_reduce(n, true);
  }

  for (void* p : buffers) CUDA_CHECK(cudaFree(p));
  CUDA_CHECK(cudaStreamDestroy(stream));
  if (failures) {
    std::printf("%d kernel test(s) failed\n", failures);
    return 1;
  }
  std::printf("all kernel tests passed\n");
  return 0;
}
