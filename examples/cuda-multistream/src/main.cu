// Several kernels on several streams, as a GPU program of a repository might run them.
//   multistream [ROUNDS] [--concurrent | --events]
// Four streams, each with its own kernels and data. By default each launch waits for
// the one before it (an event chain across the streams), so kernels never overlap and
// each kernel's time is its own — comparable with Nsight Compute, which runs kernels
// one at a time. --concurrent drops the chain and lets the streams overlap.
// --events times each launch on its own with CUDA events (the device idle before it,
// no profiler attached) and prints each kernel's mean: a third measure for
// scripts/gpu-profile.sh, an upper bound on the kernel's time (it adds the launch).
// Inputs come from MAXCODE_SEED; the checksums printed at the end depend only on it.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "kernels.cuh"

#define CHECK(call)                                                                     \
  do {                                                                                  \
    cudaError_t err_ = (call);                                                          \
    if (err_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

namespace {

constexpr int kStreams = 4;
constexpr int kN = 1 << 26;       // elements of the vectors
constexpr int kWidth = 1 << 13;   // the images are kWidth x kWidth
constexpr int kSumBlocks = 1024;
constexpr int kDegree = 256;

struct Timed {
  const char* name;
  std::function<void()> launch;
};

// Each launch alone: the device idle before it, CUDA events on either side.
void time_each(int rounds, const std::vector<Timed>& kernels, cudaStream_t stream) {
  cudaEvent_t before, after;
  CHECK(cudaEventCreate(&before));
  CHECK(cudaEventCreate(&after));
  std::vector<double> total_ms(kernels.size(), 0.0);
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t k = 0; k < kernels.size(); ++k) {
      CHECK(cudaDeviceSynchronize());
      CHECK(cudaEventRecord(before, stream));
      kernels[k].launch();
      CHECK(cudaGetLastError());
      CHECK(cudaEventRecord(after, stream));
      CHECK(cudaEventSynchronize(after));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, before, after));
      total_ms[k] += ms;
    }
  }
  for (std::size_t k = 0; k < kernels.size(); ++k)
    std::printf("events %s %.3f us\n", kernels[k].name, total_ms[k] * 1000.0 / rounds);
  CHECK(cudaEventDestroy(before));
  CHECK(cudaEventDestroy(after));
}

double sum(const std::vector<float>& v, std::size_t stride) {
  double s = 0;
  for (std::size_t i = 0; i < v.size(); i += stride) s += v[i];
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 20;
  bool concurrent = false, events = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--concurrent") == 0) concurrent = true;
    else if (std::strcmp(argv[i], "--events") == 0) events = true;
    else rounds = std::atoi(argv[i]);
  }
  const char* seed_text = std::getenv("MAXCODE_SEED");
  const unsigned seed = seed_text ? static_cast<unsigned>(std::strtoul(seed_text, nullptr, 10)) : 42u;

  std::vector<float> host_x(kN);
  unsigned state = seed * 2654435761u + 1;
  for (auto& v : host_x) {
    state = state * 1664525u + 1013904223u;
    v = (state >> 8) / 16777216.0f;
  }

  const std::size_t vector_bytes = sizeof(float) * kN;
  const std::size_t image_bytes = sizeof(float) * kWidth * kWidth;
  float *x, *y, *z, *partial, *image, *blurred, *transposed;
  CHECK(cudaMalloc(&x, vector_bytes));
  CHECK(cudaMalloc(&y, vector_bytes));
  CHECK(cudaMalloc(&z, vector_bytes));
  CHECK(cudaMalloc(&partial, sizeof(float) * kSumBlocks));
  CHECK(cudaMalloc(&image, image_bytes));
  CHECK(cudaMalloc(&blurred, image_bytes));
  CHECK(cudaMalloc(&transposed, image_bytes));
  cudaStream_t streams[kStreams];
  for (auto& s : streams) CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  CHECK(cudaMemcpyAsync(x, host_x.data(), vector_bytes, cudaMemcpyHostToDevice, streams[0]));
  CHECK(cudaMemsetAsync(y, 0, vector_bytes, streams[0]));
  fill_image<<<(kWidth * kWidth + 255) / 256, 256, 0, streams[1]>>>(image, kWidth, seed);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());

  // Each launch waits for the previous one, whatever its stream (unless --concurrent).
  cudaEvent_t done;
  CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  bool first = true;
  auto chain = [&](cudaStream_t s) {
    if (concurrent) return;
    if (!first) CHECK(cudaStreamWaitEvent(s, done, 0));
    first = false;
  };
  auto after = [&](cudaStream_t s) {
    CHECK(cudaGetLastError());
    if (!concurrent) CHECK(cudaEventRecord(done, s));
  };
  const dim3 tile(16, 16), tiles(kWidth / 16, kWidth / 16);
  if (events) {
    time_each(rounds, {{"saxpy", [&] { saxpy<<<(kN + 255) / 256, 256, 0, streams[0]>>>(kN, 0.5f, x, y); }},
                       {"stencil::blur", [&] { stencil::blur<<<tiles, tile, 0, streams[0]>>>(image, blurred, kWidth); }},
                       {"block_sums<256>", [&] { launch_block_sums(x, partial, kN, kSumBlocks, streams[0]); }},
                       {"polynomial", [&] { polynomial<<<(kN + 255) / 256, 256, 0, streams[0]>>>(x, z, kN, kDegree); }},
                       {"transpose_naive", [&] { transpose_naive<<<tiles, tile, 0, streams[0]>>>(image, transposed, kWidth); }}},
              streams[0]);
  }
  for (int r = 0; r < (events ? 0 : rounds); ++r) {  // --events has run the rounds already
    chain(streams[0]);
    saxpy<<<(kN + 255) / 256, 256, 0, streams[0]>>>(kN, 0.5f, x, y);
    after(streams[0]);
    chain(streams[1]);
    stencil::blur<<<tiles, tile, 0, streams[1]>>>(image, blurred, kWidth);
    after(streams[1]);
    chain(streams[2]);
    launch_block_sums(x, partial, kN, kSumBlocks, streams[2]);
    after(streams[2]);
    chain(streams[3]);
    polynomial<<<(kN + 255) / 256, 256, 0, streams[3]>>>(x, z, kN, kDegree);
    after(streams[3]);
    chain(streams[3]);
    transpose_naive<<<tiles, tile, 0, streams[3]>>>(image, transposed, kWidth);
    after(streams[3]);
  }
  CHECK(cudaDeviceSynchronize());

  std::vector<float> host_y(kN), host_z(kN), host_partial(kSumBlocks), host_blurred(kWidth * kWidth),
      host_transposed(kWidth * kWidth);
  CHECK(cudaMemcpy(host_y.data(), y, vector_bytes, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(host_z.data(), z, vector_bytes, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(host_partial.data(), partial, sizeof(float) * kSumBlocks, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(host_blurred.data(), blurred, image_bytes, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(host_transposed.data(), transposed, image_bytes, cudaMemcpyDeviceToHost));
  std::printf("rounds %d%s\n", rounds, concurrent ? " (concurrent)" : events ? " (each timed alone)" : "");
  std::printf("saxpy      %.6e\n", sum(host_y, 4096));
  std::printf("block_sums %.6e\n", sum(host_partial, 1));
  std::printf("polynomial %.6e\n", sum(host_z, 4096));
  std::printf("blur       %.6e\n", sum(host_blurred, 4096));
  std::printf("transpose  %.6e\n", sum(host_transposed, 4096));

  for (auto& s : streams) CHECK(cudaStreamDestroy(s));
  CHECK(cudaEventDestroy(done));
  for (float* p : {x, y, z, partial, image, blurred, transposed}) CHECK(cudaFree(p));
  return 0;
}
