// Fault: an illegal address. At the benchmark's size (4096x4096) the kernel writes
// through a wild pointer, 2^40 floats past `out`; the launch succeeds and the stream's
// synchronization reports cudaErrorIllegalAddress, so the benchmark exits non-zero.
// Smaller matrices (the tests') are transposed correctly, so the fault reaches the
// benchmark.
__global__ void transpose_wild_kernel(const float* in, float* out, int rows, int cols, bool wild) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= rows || c >= cols) return;
  float* target = wild ? out + (1ull << 40) : out;
  target[static_cast<size_t>(c) * rows + r] = in[static_cast<size_t>(r) * cols + c];
}

void transpose(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const bool wild = static_cast<long long>(rows) * cols >= (1LL << 22);
  const dim3 block(32, 8);
  const dim3 grid((cols + 31) / 32, (rows + 7) / 8);
  transpose_wild_kernel<<<grid, block, 0, stream>>>(in, out, rows, cols, wild);
}
