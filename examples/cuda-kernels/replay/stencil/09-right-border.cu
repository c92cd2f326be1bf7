// Fast-looking but WRONG: the border test forgets the right-hand column, so the last
// cell of each interior row is averaged with the first cell of the next row instead of
// being copied. Every load stays in bounds, so nothing crashes; the values differ.
__global__ void stencil5_right_border_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= rows || c >= cols) return;
  const size_t i = static_cast<size_t>(r) * cols + c;
  if (r == 0 || c == 0 || r == rows - 1) {  // BUG: c == cols - 1 is a border too
    out[i] = __ldg(&in[i]);
    return;
  }
  out[i] = 0.2f * (__ldg(&in[i]) + __ldg(&in[i - cols]) + __ldg(&in[i + cols]) + __ldg(&in[i - 1]) + __ldg(&in[i + 1]));
}

void stencil5(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const dim3 block(32, 8);
  const dim3 grid((cols + 31) / 32, (rows + 7) / 8);
  stencil5_right_border_kernel<<<grid, block, 0, stream>>>(in, out, rows, cols);
}
