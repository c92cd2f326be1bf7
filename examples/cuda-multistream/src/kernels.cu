#include "kernels.cuh"

__global__ void fill_image(float* image, int width, unsigned seed) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long>(width) * width) return;
  unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
  h ^= h >> 13, h *= 0x5bd1e995u, h ^= h >> 15;
  image[i] = (h & 0xffff) / 65536.0f;
}

// Memory-bound: two reads and a write per element.
__global__ void saxpy(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// One partial sum per block, summed on the host in a fixed order: the result does not
// depend on scheduling (atomics would make the printed sum vary from run to run).
template <int BLOCK>
__global__ void block_sums(const float* in, float* partial, int n) {
  __shared__ float part[BLOCK];
  float s = 0;
  for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += gridDim.x * BLOCK) s += in[i];
  part[threadIdx.x] = s;
  __syncthreads();
  for (int half = BLOCK / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) part[threadIdx.x] += part[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = part[0];
}

void launch_block_sums(const float* in, float* partial, int n, int blocks, cudaStream_t stream) {
  block_sums<256><<<blocks, 256, 0, stream>>>(in, partial, n);
}

// Compute-bound: Horner's rule, `degree` dependent multiply-adds per element.
__global__ void polynomial(const float* x, float* y, int n, int degree) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float v = x[i];
  float acc = 0;
  for (int k = 0; k < degree; ++k) acc = acc * v + 1.0f / (k + 1);
  y[i] = acc;
}

// Reads along rows, writes along columns: every write its own memory transaction.
__global__ void transpose_naive(const float* in, float* out, int width) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < width && y < width) out[static_cast<long>(x) * width + y] = in[static_cast<long>(y) * width + x];
}

namespace stencil {

// A 3x3 box blur; borders copied.
__global__ void blur(const float* in, float* out, int width) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= width) return;
  const long at = static_cast<long>(y) * width + x;
  if (x == 0 || y == 0 || x == width - 1 || y == width - 1) {
    out[at] = in[at];
    return;
  }
  float s = 0;
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx) s += in[at + static_cast<long>(dy) * width + dx];
  out[at] = s / 9.0f;
}

}  // namespace stencil
