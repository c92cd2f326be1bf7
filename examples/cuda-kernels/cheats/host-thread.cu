// Cheat: work on a host thread. The input is copied to the host, transposed on a
// std::thread (joined before returning) and copied back with cudaMemcpy. No kernel is
// launched, so a kernel timer sees no work at all.
#include <thread>
#include <vector>

void transpose(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  cudaStreamSynchronize(stream);  // whatever the caller queued (the output's poison) comes first
  const size_t n = static_cast<size_t>(rows) * cols;
  std::vector<float> host_in(n), host_out(n);
  cudaMemcpy(host_in.data(), in, n * sizeof(float), cudaMemcpyDeviceToHost);
  std::thread worker([&] {
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) host_out[static_cast<size_t>(c) * rows + r] = host_in[static_cast<size_t>(r) * cols + c];
  });
  worker.join();
  cudaMemcpy(out, host_out.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaDeviceSynchronize();  // a copy from pageable memory may still be in flight
}
