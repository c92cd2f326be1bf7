// Sum of floats into one double, the naive way: one element per thread, a shared-memory
// tree with interleaved addressing (`tid % (2 * s)`: a division per step and warps that
// are mostly idle), and one double atomicAdd per block. Small blocks mean many blocks
// and so many atomics on the same address, which serialize.
#include "kernels.h"

#define REDUCE_BLOCK 128  // maxcode: tune REDUCE_BLOCK 64 128 256 512 1024

__global__ void reduce_naive_kernel(const float* in, int n, double* out) {
  __shared__ double partial[REDUCE_BLOCK];
  const unsigned tid = threadIdx.x;
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + tid;
  partial[tid] = i < n ? static_cast<double>(in[i]) : 0.0;
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {  // blockDim.x is a power of two
    if (tid % (2 * s) == 0) partial[tid] += partial[tid + s];
    __syncthreads();
  }
  if (tid == 0) atomicAdd(out, partial[0]);
}

void reduce_sum(const float* in, int n, double* out, cudaStream_t stream) {
  cudaMemsetAsync(out, 0, sizeof(double), stream);
  if (n <= 0) return;
  const unsigned blocks = static_cast<unsigned>((static_cast<long long>(n) + REDUCE_BLOCK - 1) / REDUCE_BLOCK);
  reduce_naive_kernel<<<blocks, REDUCE_BLOCK, 0, stream>>>(in, n, out);
}
