// Hand-written: the same one-thread-per-cell kernel, but 32x8 blocks (each warp reads
// whole 128-byte rows; less halo re-read per cell than 8x4) and loads through the
// read-only path (__ldg). Same expression, same order: bit-identical output.
__global__ void stencil5_ldg_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= rows || c >= cols) return;
  const size_t i = static_cast<size_t>(r) * cols + c;
  if (r == 0 || c == 0 || r == rows - 1 || c == cols - 1) {
    out[i] = __ldg(&in[i]);
    return;
  }
  out[i] = 0.2f * (__ldg(&in[i]) + __ldg(&in[i - cols]) + __ldg(&in[i + cols]) + __ldg(&in[i - 1]) + __ldg(&in[i + 1]));
}

void stencil5(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const dim3 block(32, 8);
  const dim3 grid((cols + 31) / 32, (rows + 7) / 8);
  stencil5_ldg_kernel<<<grid, block, 0, stream>>>(in, out, rows, cols);
}
