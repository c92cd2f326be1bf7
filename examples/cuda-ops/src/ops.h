// A few GPU operations of a small model, each a kernel and its host launcher. Pointers
// are device pointers; every launcher is asynchronous on `stream`.
#pragma once

#include <cuda_runtime.h>

// c[m x n] = a[m x k] * b[k x n], row-major.
void matmul(const float* a, const float* b, float* c, int m, int n, int k, cudaStream_t stream);

// Each row of x[rows x cols] replaced by its softmax.
void softmax_rows(float* x, int rows, int cols, cudaStream_t stream);

// y = alpha * x + y.
void axpy(float alpha, const float* x, float* y, int n, cudaStream_t stream);
