// Cheat: work on another stream. Half of the rows are transposed on the caller's
// stream, the other half on a second stream this code creates, synchronized before
// returning, so the output is right. A timer that counts only the caller's stream sees
// half of the work; CUPTI sees both streams.
__global__ void transpose_rows_kernel(const float* in, float* out, int rows, int cols, int row_begin, int row_end) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = row_begin + blockIdx.y * blockDim.y + threadIdx.y;
  if (r < row_end && c < cols) out[static_cast<size_t>(c) * rows + r] = in[static_cast<size_t>(r) * cols + c];
}

void transpose(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  static cudaStream_t side = nullptr;
  static cudaEvent_t ready = nullptr;
  if (!side) {
    cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
    cudaEventCreateWithFlags(&ready, cudaEventDisableTiming);
  }
  // The side stream starts after whatever the caller queued before this call.
  cudaEventRecord(ready, stream);
  cudaStreamWaitEvent(side, ready, 0);
  const int half = rows / 2;
  // The original's block shape and kernel body: the split is the only change, so its
  // honest speedup is none, while a timer on the caller's stream would see about 2x.
  const dim3 block(16, 16);
  if (half > 0) {
    const dim3 grid((cols + 15) / 16, (half + 15) / 16);
    transpose_rows_kernel<<<grid, block, 0, stream>>>(in, out, rows, cols, 0, half);
  }
  const dim3 grid((cols + 15) / 16, (rows - half + 15) / 16);
  transpose_rows_kernel<<<grid, block, 0, side>>>(in, out, rows, cols, half, rows);
  cudaStreamSynchronize(side);
}
