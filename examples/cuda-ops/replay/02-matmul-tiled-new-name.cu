// The same tiling as 01, under a new kernel name: what a candidate had to do before
// targets were units (only the launcher could be replaced, helpers added beside it).
#define MATMUL_TILE2 32

__global__ void matmul_tiled_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
  __shared__ float a_tile[MATMUL_TILE2][MATMUL_TILE2];
  __shared__ float b_tile[MATMUL_TILE2][MATMUL_TILE2 + 1];
  const int col = blockIdx.x * MATMUL_TILE2 + threadIdx.x;
  const int row = blockIdx.y * MATMUL_TILE2 + threadIdx.y;
  float acc = 0.0f;
  for (int base = 0; base < k; base += MATMUL_TILE2) {
    const int a_col = base + threadIdx.x, b_row = base + threadIdx.y;
    a_tile[threadIdx.y][threadIdx.x] = row < m && a_col < k ? a[static_cast<size_t>(row) * k + a_col] : 0.0f;
    b_tile[threadIdx.y][threadIdx.x] = b_row < k && col < n ? b[static_cast<size_t>(b_row) * n + col] : 0.0f;
    __syncthreads();
    const int depth = min(MATMUL_TILE2, k - base);
    for (int i = 0; i < depth; ++i) acc += a_tile[threadIdx.y][i] * b_tile[i][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) c[static_cast<size_t>(row) * n + col] = acc;
}

void matmul(const float* a, const float* b, float* c, int m, int n, int k, cudaStream_t stream) {
  if (m <= 0 || n <= 0) return;
  const dim3 block(MATMUL_TILE2, MATMUL_TILE2);
  const dim3 grid((n + MATMUL_TILE2 - 1) / MATMUL_TILE2, (m + MATMUL_TILE2 - 1) / MATMUL_TILE2);
  matmul_tiled_kernel<<<grid, block, 0, stream>>>(a, b, c, m, n, k);
}
