// Matrix transpose, the naive way: one thread per element. Reads walk along a row of
// `in` (coalesced); writes walk down a column of `out`, so the threads of a warp store
// to BLOCK_X different rows of `out` (uncoalesced). The block shape decides how many
// 32-byte sectors each warp's store touches.
#include "kernels.h"

#define TRANSPOSE_BLOCK_X 16  // maxcode: tune TRANSPOSE_BLOCK_X 8 16 32
#define TRANSPOSE_BLOCK_Y 16  // maxcode: tune TRANSPOSE_BLOCK_Y 4 8 16

__global__ void transpose_naive_kernel(const float* in, float* out, int rows, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) out[static_cast<size_t>(c) * rows + r] = in[static_cast<size_t>(r) * cols + c];
}

void transpose(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const dim3 block(TRANSPOSE_BLOCK_X, TRANSPOSE_BLOCK_Y);
  const dim3 grid((cols + TRANSPOSE_BLOCK_X - 1) / TRANSPOSE_BLOCK_X, (rows + TRANSPOSE_BLOCK_Y - 1) / TRANSPOSE_BLOCK_Y);
  transpose_naive_kernel<<<grid, block, 0, stream>>>(in, out, rows, cols);
}
