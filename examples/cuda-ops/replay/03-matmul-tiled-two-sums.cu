// The tiled kernel of 01 with the k loop split over two accumulators (even and odd
// steps of each tile), added at the end: more independent multiply-adds in flight, and
// a float sum in a different order, so the outputs move in their last bits. It is the
// honest rewrite that a tolerance must accept (docs/init.md, "Tolerances"): `init`
// chose rtol/atol from the original's own sensitivity to fast-math flags.
#define MATMUL_TILE 32

__global__ void matmul_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
  __shared__ float a_tile[MATMUL_TILE][MATMUL_TILE];
  __shared__ float b_tile[MATMUL_TILE][MATMUL_TILE + 1];
  const int col = blockIdx.x * MATMUL_TILE + threadIdx.x;
  const int row = blockIdx.y * MATMUL_TILE + threadIdx.y;
  float even = 0.0f, odd = 0.0f;
  for (int base = 0; base < k; base += MATMUL_TILE) {
    const int a_col = base + threadIdx.x, b_row = base + threadIdx.y;
    a_tile[threadIdx.y][threadIdx.x] = row < m && a_col < k ? a[static_cast<size_t>(row) * k + a_col] : 0.0f;
    b_tile[threadIdx.y][threadIdx.x] = b_row < k && col < n ? b[static_cast<size_t>(b_row) * n + col] : 0.0f;
    __syncthreads();
    // Out-of-range entries of a partial tile were staged as zeros: the whole tile adds.
#pragma unroll
    for (int i = 0; i < MATMUL_TILE; i += 2) {
      even += a_tile[threadIdx.y][i] * b_tile[i][threadIdx.x];
      odd += a_tile[threadIdx.y][i + 1] * b_tile[i + 1][threadIdx.x];
    }
    __syncthreads();
  }
  if (row < m && col < n) c[static_cast<size_t>(row) * n + col] = even + odd;
}

void matmul(const float* a, const float* b, float* c, int m, int n, int k, cudaStream_t stream) {
  if (m <= 0 || n <= 0) return;
  const dim3 block(MATMUL_TILE, MATMUL_TILE);
  const dim3 grid((n + MATMUL_TILE - 1) / MATMUL_TILE, (m + MATMUL_TILE - 1) / MATMUL_TILE);
  matmul_kernel<<<grid, block, 0, stream>>>(a, b, c, m, n, k);
}
