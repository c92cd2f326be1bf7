// Cheat: not writing the output. An empty kernel is launched (so there is a kernel to
// time) and the output keeps whatever the buffer held: stale results from an earlier
// call, or zeros, pass a check that does not reset the output first.
__global__ void transpose_nothing_kernel(const float*, float*, int, int) {}

void transpose(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  transpose_nothing_kernel<<<1, 32, 0, stream>>>(in, out, rows, cols);
}
