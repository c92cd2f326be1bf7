// Three small GPU kernels, each behind a host launcher: the launchers are what maxcode
// optimizes. Every launcher enqueues all of its work on `stream` and may return before
// that work is done; it reports errors the CUDA way (the caller checks
// cudaGetLastError() and the stream's synchronization). All pointers are device
// pointers.
#pragma once

#include <cuda_runtime.h>

// out[c * rows + r] = in[r * cols + c]: `in` is rows x cols, row-major; `out` is
// cols x rows, row-major. Exact. rows, cols >= 0.
void transpose(const float* in, float* out, int rows, int cols, cudaStream_t stream);

// *out = the sum of in[0..n), n >= 0 (0 for n == 0). `in` need only be 4-byte aligned.
// Accumulated in double: |*out - exact sum| <= 1e-9 * sum |in[i]|. (For inputs that are
// multiples of 2^-23 in [-1, 1), like the tests' and the benchmark's, every partial sum
// is exact in double, so any summation order gives the same bits.)
void reduce_sum(const float* in, int n, double* out, cudaStream_t stream);

// 5-point Jacobi step on a rows x cols row-major grid: border cells are copied, every
// other cell is
//   out[r][c] = 0.2f * (in[r][c] + in[r-1][c] + in[r+1][c] + in[r][c-1] + in[r][c+1])
// evaluated in float, left to right, in exactly that order (the result is bit-exact).
void stencil5(const float* in, float* out, int rows, int cols, cudaStream_t stream);
