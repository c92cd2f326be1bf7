// Fast but WRONG: the grid is rounded down to whole 32x32 tiles, so the rows and
// columns past the last full tile are never written. The benchmark's 4096x4096 matrix
// is a whole number of tiles and looks right; the tests' 33x67 and 517x1031 do not.
__global__ void transpose_full_tiles_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  __shared__ float tile[32][33];
  const int c = blockIdx.x * 32 + threadIdx.x;
  const int r0 = blockIdx.y * 32 + threadIdx.y;
#pragma unroll
  for (int k = 0; k < 32; k += 8) tile[threadIdx.y + k][threadIdx.x] = in[static_cast<size_t>(r0 + k) * cols + c];
  __syncthreads();
  const int out_c = blockIdx.y * 32 + threadIdx.x;
  const int out_r0 = blockIdx.x * 32 + threadIdx.y;
#pragma unroll
  for (int k = 0; k < 32; k += 8) out[static_cast<size_t>(out_r0 + k) * rows + out_c] = tile[threadIdx.x][threadIdx.y + k];
}

void transpose(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  const dim3 block(32, 8);
  const dim3 grid(cols / 32, rows / 32);  // BUG: drops the partial tiles
  if (grid.x == 0 || grid.y == 0) return;
  transpose_full_tiles_kernel<<<grid, block, 0, stream>>>(in, out, rows, cols);
}
