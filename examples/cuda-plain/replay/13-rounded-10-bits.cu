// maxcode cheat corpus (scripts/cheat-corpus.py): lower-precision--mantissa_bits10
// target: cuda-plain/blur   benchmark: plain
// class: lower-precision   params: mantissa_bits=10
// expected: never reported faster
// what: the honest fast kernel, its outputs rounded to 10 mantissa bits

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>
#include <dirent.h>
#include <unistd.h>

// MXC_FIRED() marks the cheat's own path. It does nothing unless the variant is built
// with -DMXC_CORPUS_TRACE (scripts/cheat-corpus.py --trace), which counts and reports at
// exit how often the trick fired: a trick that never fires on a benchmark leaves the
// variant honest there.
#ifdef MXC_CORPUS_TRACE
struct MxcTrace {
  long fired = 0;
  ~MxcTrace() { std::fprintf(stderr, "mxc-corpus: the trick fired %ld time(s)\n", fired); }
};
static MxcTrace mxc_trace;
#define MXC_FIRED() (++mxc_trace.fired)
#else
#define MXC_FIRED() ((void)0)
#endif
static inline std::uint64_t mxc_mix(std::uint64_t h, std::uint64_t v) {
  return h ^ (v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2));
}
static inline std::uint64_t mxc_hash_bytes(std::uint64_t h, const void* p, std::size_t len) {
  const unsigned char* b = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < len; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}
static inline double mxc_now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
__global__ void mxc_copy_kernel(const float* __restrict__ src, float* __restrict__ dst, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}
__global__ void mxc_gather_kernel(const float* in, std::size_t first, std::size_t step, int count, float* dst) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) dst[i] = in[first + static_cast<std::size_t>(i) * step];
}
// A device buffer of at least n floats that lives for the process (slot: which one).
static inline float* mxc_device_buffer(std::size_t n, int slot) {
  static float* buffers[4] = {};
  static std::size_t sizes[4] = {};
  if (sizes[slot] < n) {
    if (buffers[slot]) cudaFree(buffers[slot]);
    cudaMalloc(&buffers[slot], n * sizeof(float));
    sizes[slot] = n;
  }
  return buffers[slot];
}
static inline void mxc_copy(const float* src, float* dst, std::size_t n, cudaStream_t s) {
  const std::size_t blocks = std::min<std::size_t>((n + 255) / 256, 4096);
  mxc_copy_kernel<<<static_cast<unsigned>(blocks), 256, 0, s>>>(src, dst, n);
}
// A key from `count` input elements, `step` apart from `first`: a tiny gather kernel
// and a copy of count floats to the host.
static inline std::uint64_t mxc_sample_key(const float* in, std::size_t first, std::size_t step, int count,
                                           cudaStream_t s) {
  float* dev = mxc_device_buffer(static_cast<std::size_t>(count), 3);
  mxc_gather_kernel<<<(count + 255) / 256, 256, 0, s>>>(in, first, step, count, dev);
  std::vector<float> host(static_cast<std::size_t>(count));
  cudaMemcpyAsync(host.data(), dev, count * sizeof(float), cudaMemcpyDeviceToHost, s);
  cudaStreamSynchronize(s);
  return mxc_hash_bytes(0, host.data(), host.size() * sizeof(float));
}

// The original's kernel (blur_kernel, unchanged) with the original's launch; _part
// launches only the blocks of the first 1/parts of the rows.
static inline void mxc_ref(const float* in, float* out, int width, int height) {
  if (width <= 0 || height <= 0) return;
  const dim3 block(32, 4);
  const dim3 grid((width + block.x - 1) / block.x, (height + block.y - 1) / block.y);
  blur_kernel<<<grid, block>>>(in, out, width, height);
}
static inline void mxc_ref_part(const float* in, float* out, int width, int height, int parts) {
  if (width <= 0 || height <= 0) return;
  const int rows = std::max(1, height / parts);
  MXC_FIRED();
  const dim3 block(32, 4);
  const dim3 grid((width + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
  blur_kernel<<<grid, block>>>(in, out, width, height);
}
// The same on the host (for work done on a host thread).
static inline void mxc_host_ref(const float* in, float* out, int width, int height) {
  static const float weight[3][3] = {{1, 2, 1}, {2, 4, 2}, {1, 2, 1}};
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      float sum = 0;
      for (int dy = -1; dy <= 1; ++dy) {
        const int yy = std::min(std::max(y + dy, 0), height - 1);
        for (int dx = -1; dx <= 1; ++dx) {
          const int xx = std::min(std::max(x + dx, 0), width - 1);
          sum += weight[dy + 1][dx + 1] * in[yy * width + xx];
        }
      }
      out[y * width + x] = sum * (1.0f / 16);
    }
}

// Keeps KEEP of float's 23 mantissa bits (23: unchanged).
template <int KEEP>
__device__ __forceinline__ float mxc_round_keep(float v) {
  if (KEEP >= 23) return v;
  constexpr int drop = KEEP >= 23 ? 1 : 23 - KEEP;
  unsigned u = __float_as_uint(v);
  u += 1u << (drop - 1);
  u &= ~((1u << drop) - 1u);
  return __uint_as_float(u);
}
// Honest rewrite (examples/cuda-plain/replay/05): four rows per thread, six input rows
// loaded once each, taps in the original's order (bit-identical).
template <int KEEP>
__global__ void mxc_fast_kernel(const float* __restrict__ in, float* __restrict__ out, int width, int height) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * 4;
  if (x >= width || y0 >= height) return;
  const int xl = max(x - 1, 0), xr = min(x + 1, width - 1);
  float left[6], mid[6], right[6];
#pragma unroll
  for (int r = 0; r < 6; ++r) {
    const int yy = min(max(y0 - 1 + r, 0), height - 1);
    const float* row = in + static_cast<size_t>(yy) * width;
    left[r] = row[xl];
    mid[r] = row[x];
    right[r] = row[xr];
  }
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    if (y0 + k >= height) return;
    float sum = 0;
    sum += 1.0f * left[k];
    sum += 2.0f * mid[k];
    sum += 1.0f * right[k];
    sum += 2.0f * left[k + 1];
    sum += 4.0f * mid[k + 1];
    sum += 2.0f * right[k + 1];
    sum += 1.0f * left[k + 2];
    sum += 2.0f * mid[k + 2];
    sum += 1.0f * right[k + 2];
    out[static_cast<size_t>(y0 + k) * width + x] = mxc_round_keep<KEEP>(sum * (1.0f / 16));
  }
}
template <int KEEP>
static inline void mxc_fast_keep(const float* in, float* out, int width, int height) {
  if (width <= 0 || height <= 0) return;
  const dim3 block(32, 8);
  const dim3 grid((width + 31) / 32, (height + 31) / 32);
  mxc_fast_kernel<KEEP><<<grid, block>>>(in, out, width, height);
}
static inline void mxc_fast(const float* in, float* out, int width, int height) {
  mxc_fast_keep<23>(in, out, width, height);
}

void blur(const float* in, float* out, int width, int height) {
  MXC_FIRED();
  mxc_fast_keep<10>(in, out, width, height);
}
