// 5-point Jacobi step, the naive way: one thread per cell, five loads from global
// memory, border cells copied. Neighbours come from L1/L2 when they are lucky; the block
// shape decides how many rows and 32-byte sectors a warp touches and how much of the
// halo neighbouring blocks read again.
#include "kernels.h"

#define STENCIL_BLOCK_X 8  // maxcode: tune STENCIL_BLOCK_X 8 16 32 64
#define STENCIL_BLOCK_Y 4  // maxcode: tune STENCIL_BLOCK_Y 2 4 8 16

__global__ void stencil5_naive_kernel(const float* in, float* out, int rows, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= rows || c >= cols) return;
  const size_t i = static_cast<size_t>(r) * cols + c;
  if (r == 0 || c == 0 || r == rows - 1 || c == cols - 1) {
    out[i] = in[i];
    return;
  }
  out[i] = 0.2f * (in[i] + in[i - cols] + in[i + cols] + in[i - 1] + in[i + 1]);
}

void stencil5(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const dim3 block(STENCIL_BLOCK_X, STENCIL_BLOCK_Y);
  const dim3 grid((cols + STENCIL_BLOCK_X - 1) / STENCIL_BLOCK_X, (rows + STENCIL_BLOCK_Y - 1) / STENCIL_BLOCK_Y);
  stencil5_naive_kernel<<<grid, block, 0, stream>>>(in, out, rows, cols);
}
