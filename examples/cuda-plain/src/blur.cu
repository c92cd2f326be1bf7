#include "blur.h"

// One thread per pixel; every tap clamps its coordinates and reads global memory, so
// each input pixel is loaded nine times.
__global__ void blur_kernel(const float* in, float* out, int width, int height) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  const float weight[3][3] = {{1, 2, 1}, {2, 4, 2}, {1, 2, 1}};
  float sum = 0;
  for (int dy = -1; dy <= 1; ++dy) {
    const int yy = min(max(y + dy, 0), height - 1);
    for (int dx = -1; dx <= 1; ++dx) {
      const int xx = min(max(x + dx, 0), width - 1);
      sum += weight[dy + 1][dx + 1] * in[yy * width + xx];
    }
  }
  out[y * width + x] = sum * (1.0f / 16);
}

void blur(const float* in, float* out, int width, int height) {
  if (width <= 0 || height <= 0) return;
  const dim3 block(32, 4);
  const dim3 grid((width + block.x - 1) / block.x, (height + block.y - 1) / block.y);
  blur_kernel<<<grid, block>>>(in, out, width, height);
}
