#include "ops.h"

#include <cfloat>

// One thread per output element, reading a row of `a` and a column of `b` from global
// memory: the column reads are strided, and nothing is reused between threads.
__global__ void matmul_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= m || col >= n) return;
  float acc = 0.0f;
  for (int i = 0; i < k; ++i) acc += a[static_cast<size_t>(row) * k + i] * b[static_cast<size_t>(i) * n + col];
  c[static_cast<size_t>(row) * n + col] = acc;
}

void matmul(const float* a, const float* b, float* c, int m, int n, int k, cudaStream_t stream) {
  if (m <= 0 || n <= 0) return;
  const dim3 block(16, 16);
  const dim3 grid((n + block.x - 1) / block.x, (m + block.y - 1) / block.y);
  matmul_kernel<<<grid, block, 0, stream>>>(a, b, c, m, n, k);
}

// One block per row: a max, then a sum of exponentials, then the division.
__global__ void softmax_rows_kernel(float* x, int cols) {
  extern __shared__ float scratch[];
  float* row = x + static_cast<size_t>(blockIdx.x) * cols;
  float local_max = -FLT_MAX;
  for (int i = threadIdx.x; i < cols; i += blockDim.x) local_max = fmaxf(local_max, row[i]);
  scratch[threadIdx.x] = local_max;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) scratch[threadIdx.x] = fmaxf(scratch[threadIdx.x], scratch[threadIdx.x + s]);
    __syncthreads();
  }
  const float row_max = scratch[0];
  __syncthreads();
  float local_sum = 0.0f;
  for (int i = threadIdx.x; i < cols; i += blockDim.x) local_sum += expf(row[i] - row_max);
  scratch[threadIdx.x] = local_sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) scratch[threadIdx.x] += scratch[threadIdx.x + s];
    __syncthreads();
  }
  const float inv = 1.0f / scratch[0];
  for (int i = threadIdx.x; i < cols; i += blockDim.x) row[i] = expf(row[i] - row_max) * inv;
}

void softmax_rows(float* x, int rows, int cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const int threads = 256;  // a power of two: the reductions halve it
  softmax_rows_kernel<<<rows, threads, threads * sizeof(float), stream>>>(x, cols);
}

__global__ void axpy_kernel(float alpha, const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = alpha * x[i] + y[i];
}

void axpy(float alpha, const float* x, float* y, int n, cudaStream_t stream) {
  if (n <= 0) return;
  const int threads = 256;
  axpy_kernel<<<(n + threads - 1) / threads, threads, 0, stream>>>(alpha, x, y, n);
}
