// Each operation against a CPU reference, on sizes that are not multiples of any block
// or tile shape (so a kernel that drops the edges fails), and on empty inputs.
#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

#include "ops.h"

namespace {

int failures = 0;

void expect_close(const char* what, const std::vector<float>& got, const std::vector<float>& want, float tol) {
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::fabs(got[i] - want[i]) > tol * (1.0f + std::fabs(want[i]))) {
      std::printf("%s: element %zu is %g, expected %g\n", what, i, got[i], want[i]);
      ++failures;
      return;
    }
  }
}

std::vector<float> values(size_t count, int salt) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = static_cast<float>((i * 37 + salt * 11) % 23) / 11.0f - 1.0f;
  return v;
}

float* to_device(const std::vector<float>& host) {
  float* device = nullptr;
  cudaMalloc(&device, (host.empty() ? 1 : host.size()) * sizeof(float));
  cudaMemcpy(device, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice);
  return device;
}

std::vector<float> to_host(const float* device, size_t count) {
  std::vector<float> host(count);
  cudaDeviceSynchronize();
  cudaMemcpy(host.data(), device, count * sizeof(float), cudaMemcpyDeviceToHost);
  return host;
}

void test_matmul(int m, int n, int k) {
  const auto a = values(static_cast<size_t>(m) * k, 1), b = values(static_cast<size_t>(k) * n, 2);
  std::vector<float> want(static_cast<size_t>(m) * n);
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c) {
      double acc = 0;
      for (int i = 0; i < k; ++i) acc += static_cast<double>(a[r * k + i]) * b[i * n + c];
      want[static_cast<size_t>(r) * n + c] = static_cast<float>(acc);
    }
  float *da = to_device(a), *db = to_device(b), *dc = to_device(std::vector<float>(want.size(), NAN));
  matmul(da, db, dc, m, n, k, 0);
  char what[64];
  std::snprintf(what, sizeof what, "matmul %dx%dx%d", m, n, k);
  expect_close(what, to_host(dc, want.size()), want, 1e-4f);
  cudaFree(da), cudaFree(db), cudaFree(dc);
}

void test_softmax(int rows, int cols) {
  auto x = values(static_cast<size_t>(rows) * cols, 3);
  float* dx = to_device(x);
  softmax_rows(dx, rows, cols, 0);
  for (int r = 0; r < rows; ++r) {
    float* row = x.data() + static_cast<size_t>(r) * cols;
    float top = row[0];
    for (int i = 1; i < cols; ++i) top = std::fmax(top, row[i]);
    double sum = 0;
    for (int i = 0; i < cols; ++i) sum += std::exp(row[i] - top);
    for (int i = 0; i < cols; ++i) row[i] = static_cast<float>(std::exp(row[i] - top) / sum);
  }
  char what[64];
  std::snprintf(what, sizeof what, "softmax_rows %dx%d", rows, cols);
  expect_close(what, to_host(dx, x.size()), x, 1e-5f);
  cudaFree(dx);
}

void test_axpy(int n) {
  const auto x = values(n, 4);
  auto y = values(n, 5);
  float *dx = to_device(x), *dy = to_device(y);
  axpy(2.5f, dx, dy, n, 0);
  for (int i = 0; i < n; ++i) y[i] = 2.5f * x[i] + y[i];
  char what[64];
  std::snprintf(what, sizeof what, "axpy %d", n);
  expect_close(what, to_host(dy, n), y, 1e-6f);
  cudaFree(dx), cudaFree(dy);
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device\n");
    return 1;
  }
  for (auto [m, n, k] : {std::array<int, 3>{1, 1, 1}, {17, 33, 9}, {64, 64, 64}, {100, 70, 130}, {0, 5, 5}})
    test_matmul(m, n, k);
  for (auto [rows, cols] : {std::array<int, 2>{1, 1}, {3, 1000}, {64, 257}}) test_softmax(rows, cols);
  for (int n : {0, 1, 1000, 100003}) test_axpy(n);
  if (cudaGetLastError() != cudaSuccess) ++failures;
  std::printf(failures ? "%d failure(s)\n" : "ops: all passed\n", failures);
  return failures ? 1 : 0;
}
