// The kernels of the multi-stream example: a mix of memory-bound, compute-bound and
// badly coalesced work, so that a profile has something to rank.
#pragma once

#include <cuda_runtime.h>

__global__ void fill_image(float* image, int width, unsigned seed);
__global__ void saxpy(int n, float a, const float* x, float* y);
// block_sums<256> is a template: launched from its own file, where it is instantiated.
void launch_block_sums(const float* in, float* partial, int n, int blocks, cudaStream_t stream);
__global__ void polynomial(const float* x, float* y, int n, int degree);
__global__ void transpose_naive(const float* in, float* out, int width);

namespace stencil {
__global__ void blur(const float* in, float* out, int width);
}
