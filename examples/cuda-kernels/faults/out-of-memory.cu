// Fault: out of memory. At the benchmark's size (4096x4096) it asks cudaMalloc for a
// 64 TiB staging buffer, ignores the error, and stages the matrix through the null
// pointer it is left with: cudaGetLastError reports cudaErrorMemoryAllocation and the
// kernel faults on the null pointer, so the benchmark exits non-zero. Smaller matrices
// (the tests') go straight through, so the fault reaches the benchmark.
__global__ void transpose_staged_kernel(const float* in, float* out, float* staging, bool staged, int rows, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= rows || c >= cols) return;
  const size_t from = static_cast<size_t>(r) * cols + c;
  float v = in[from];
  if (staged) {
    staging[from] = v;
    v = static_cast<volatile float*>(staging)[from];
  }
  out[static_cast<size_t>(c) * rows + r] = v;
}

void transpose(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  float* staging = nullptr;
  const bool staged = static_cast<long long>(rows) * cols >= (1LL << 22);
  if (staged) cudaMalloc(&staging, 1ull << 46);  // fails and leaves staging null; the error is ignored
  const dim3 block(32, 8);
  const dim3 grid((cols + 31) / 32, (rows + 7) / 8);
  transpose_staged_kernel<<<grid, block, 0, stream>>>(in, out, staging, staged, rows, cols);
}
