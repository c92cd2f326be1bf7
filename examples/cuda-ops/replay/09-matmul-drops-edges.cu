// Wrong on purpose: tiles without bounds checks, and a grid that rounds down, so the
// last partial tile of rows and columns is never written. The benchmark's 1024-sized
// matrices hide it; the tests' 17x33x9 do not.
__global__ void matmul_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
  __shared__ float a_tile[16][16];
  __shared__ float b_tile[16][17];
  const int col = blockIdx.x * 16 + threadIdx.x;
  const int row = blockIdx.y * 16 + threadIdx.y;
  float acc = 0.0f;
  for (int base = 0; base + 16 <= k; base += 16) {
    a_tile[threadIdx.y][threadIdx.x] = a[static_cast<size_t>(row) * k + base + threadIdx.x];
    b_tile[threadIdx.y][threadIdx.x] = b[static_cast<size_t>(base + threadIdx.y) * n + col];
    __syncthreads();
    for (int i = 0; i < 16; ++i) acc += a_tile[threadIdx.y][i] * b_tile[i][threadIdx.x];
    __syncthreads();
  }
  c[static_cast<size_t>(row) * n + col] = acc;
}

void matmul(const float* a, const float* b, float* c, int m, int n, int k, cudaStream_t stream) {
  const dim3 block(16, 16);
  const dim3 grid(n / 16, m / 16);
  if (grid.x == 0 || grid.y == 0) return;
  matmul_kernel<<<grid, block, 0, stream>>>(a, b, c, m, n, k);
}
