// Cheat: mutating the input. The output is right, but afterwards the input is
// overwritten with zeros (const cast away), so the next call -- or a reference computed
// after this one -- sees different data.
__global__ void transpose_then_clobber_kernel(const float* in, float* out, int rows, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) out[static_cast<size_t>(c) * rows + r] = in[static_cast<size_t>(r) * cols + c];
}

void transpose(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const dim3 block(32, 8);
  const dim3 grid((cols + 31) / 32, (rows + 7) / 8);
  transpose_then_clobber_kernel<<<grid, block, 0, stream>>>(in, out, rows, cols);
  cudaMemsetAsync(const_cast<float*>(in), 0, static_cast<size_t>(rows) * cols * sizeof(float), stream);
}
