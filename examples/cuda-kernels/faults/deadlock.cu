// Fault: a deadlock. At the benchmark's size (4096x4096) one thread of the kernel spins
// on a device flag that nothing ever sets (a volatile read, so the loop is not optimized
// away), and the benchmark hangs in cudaStreamSynchronize until its time limit.
// Smaller matrices (the tests') are transposed correctly, so the fault reaches the
// benchmark.
__device__ int transpose_never_set_flag = 0;

__global__ void transpose_spinning_kernel(const float* in, float* out, int rows, int cols, bool spin) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (spin && c == 0 && r == 0) {
    while (*static_cast<volatile int*>(&transpose_never_set_flag) == 0) {
    }
  }
  if (r < rows && c < cols) out[static_cast<size_t>(c) * rows + r] = in[static_cast<size_t>(r) * cols + c];
}

void transpose(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const bool spin = static_cast<long long>(rows) * cols >= (1LL << 22);
  const dim3 block(32, 8);
  const dim3 grid((cols + 31) / 32, (rows + 7) / 8);
  transpose_spinning_kernel<<<grid, block, 0, stream>>>(in, out, rows, cols, spin);
}
