// Hand-written: a 32x32 tile staged in shared memory, padded to 33 columns so that
// reading a column of the tile hits 32 different banks. Reads and writes of global
// memory are both coalesced (whole 128-byte rows). 32x32 threads, one element each.
__global__ void transpose_tile32_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  __shared__ float tile[32][33];
  const int c = blockIdx.x * 32 + threadIdx.x;
  const int r = blockIdx.y * 32 + threadIdx.y;
  if (r < rows && c < cols) tile[threadIdx.y][threadIdx.x] = in[static_cast<size_t>(r) * cols + c];
  __syncthreads();
  const int out_c = blockIdx.y * 32 + threadIdx.x;  // a row index of `in`
  const int out_r = blockIdx.x * 32 + threadIdx.y;  // a column index of `in`
  if (out_r < cols && out_c < rows) out[static_cast<size_t>(out_r) * rows + out_c] = tile[threadIdx.x][threadIdx.y];
}

void transpose(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const dim3 block(32, 32);
  const dim3 grid((cols + 31) / 32, (rows + 31) / 32);
  transpose_tile32_kernel<<<grid, block, 0, stream>>>(in, out, rows, cols);
}
