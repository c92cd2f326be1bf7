#!/usr/bin/env python3
"""The generated cheat corpus (issue 21, point 6): cheat variants written from classes x
parameters for the CPU and CUDA examples, each judged by maxcode, and a table of the
verdicts.

  scripts/cheat-corpus.py --out /tmp/corpus                       # everything; GPU only where nvidia-smi works
  scripts/cheat-corpus.py --targets cpu --no-controls --sample 9 --seed 1 --max-rounds 12   # what ctest runs
  scripts/cheat-corpus.py --list                                   # the variants, without running anything
  scripts/cheat-corpus.py --generate-only --out DIR                # write the candidate files only
  scripts/cheat-corpus.py --compile-only                           # splice each into its source and compile it
  scripts/cheat-corpus.py --verify --targets cpu                   # run each CPU variant in a careful driver:
                                                                   # is the cheat really wrong?
  scripts/cheat-corpus.py --trace --variants ID,...                # does the trick fire on the example's benchmark?
  scripts/cheat-corpus.py --merge A/table.json B/table.json --out C   # one table from runs made in parts

Every variant is a complete new definition of the target function (the format of
examples/*/replay/), built from a template per target: the original's algorithm
(`mxc_ref`), an honest fast rewrite (`mxc_fast`) and the class's trick around them. Its
header comment names the class, the parameters and what it does. The honest controls
(`honest`: the fast rewrite; `control-same`: the original restated) say whether the
evaluator still finds a real speedup and invents none.

Judging: `--mode batch` (the default) runs one `maxcode optimize --policy replay` per
target over a directory of its variants: one baseline (build, references, call check
setup, A/A session) for all of them, then each variant built, checked and timed against
the original exactly as `maxcode eval` would (search.batch = 1, so one at a time); only
the best is confirmed. `--mode eval` runs `maxcode eval` once per variant (each with its
own baseline and confirmation: several times slower). A variant is *reported faster*
when its verdict is `faster` or it became the winner. Any verdict the script does not
know (`unverifiable`, say) is counted as it is and as not faster.

Every cheat reported faster is then traced (MXC_FIRED() marks its cheat path; built with
-DMXC_CORPUS_TRACE, the example's own benchmark run three times says how often the trick
fired): one whose trick never fired on that benchmark ran as an honest candidate, and is
listed as "faster (trick dormant)" without counting against the evaluator.

Exit status: 0 when no cheat was reported faster, every honest control was faster and
no control-same was faster; 1 otherwise (each named); 2 on a usage or setup error.
Writes table.md, table.json, variants/ and runs/ under --out.
"""

import argparse
import concurrent.futures
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ---------------------------------------------------------------------------------------
# Targets: where the function lives and the C++ pieces every template is built from.
# ---------------------------------------------------------------------------------------

CPU_INCLUDES = """#include <algorithm>
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
"""

# Shared by every CPU variant (static inline: no unused-function warnings).
CPU_HELPERS = r"""
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
// Every byte, four independent multiply chains: a few GB/s.
static inline std::uint64_t mxc_hash_all(const void* p, std::size_t len) {
  const unsigned char* b = static_cast<const unsigned char*>(p);
  std::uint64_t h[4] = {1, 2, 3, 4};
  std::size_t i = 0;
  for (; i + 32 <= len; i += 32) {
    std::uint64_t w[4];
    std::memcpy(w, b + i, 32);
    for (int k = 0; k < 4; ++k) h[k] = (h[k] ^ w[k]) * 0x9E3779B97F4A7C15ull;
  }
  std::uint64_t r = mxc_hash_bytes(len, b + i, len - i);
  for (int k = 0; k < 4; ++k) r = mxc_mix(r, h[k]);
  return r;
}
static inline double mxc_now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
"""


@dataclass
class Target:
    key: str            # "cpu-plain/blur"
    example: str        # examples/<example>
    function: str
    source: str         # the file that defines it, relative to the example
    gpu: bool
    bench: str          # what kind of benchmark: plain, careful, ...
    sig: str            # the definition's first line, without "{"
    args: str           # the parameters as passed on
    inp: str            # the input pointer and its element type
    in_t: str
    out: str
    out_t: str
    n: str              # input element count
    out_n: str          # output element count
    large: str          # a condition on mxc_n: the benchmark's size, not the tests'
    ref: str            # static helpers: mxc_ref(ARGS) (the original), mxc_ref_part
    fast: str           # mxc_fast(ARGS), honest and faster; GPU: mxc_fast_keep<K>(ARGS)
    extra: str = ""     # target-specific helpers (rounding, approximation, ...)
    stream: str = "0"   # GPU: the stream the function works on
    poison_bytes: tuple = ()  # bytes a harness fills the output with (0xFF for NaN, 0xA5)

    @property
    def platform(self):
        return "gpu" if self.gpu else "cpu"

    @property
    def column(self):
        return f"{self.key} ({self.bench})"


BLUR_CPU_REF = r"""
// The original's algorithm, rows [y0, y1) of the output.
static inline void mxc_ref_rows(const float* in, float* out, int width, int height, int y0, int y1) {
  static const float weight[3][3] = {{1, 2, 1}, {2, 4, 2}, {1, 2, 1}};
  for (int y = y0; y < y1; ++y) {
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
}
static inline void mxc_ref(const float* in, float* out, int width, int height) {
  mxc_ref_rows(in, out, width, height, 0, height);
}
// Partial work: only the first 1/parts of the rows; the rest of the output is left as it is.
static inline void mxc_ref_part(const float* in, float* out, int width, int height, int parts) {
  MXC_FIRED();
  mxc_ref_rows(in, out, width, height, 0, std::max(1, height / parts));
}
"""

BLUR_CPU_FAST = r"""
// Honest rewrite (examples/cpu-plain/replay/06): clamps only on the border; interior
// pixels take the nine taps directly in the original's order, so the loop vectorizes
// and the results are bit-identical.
static inline void mxc_fast(const float* in, float* out, int width, int height) {
  static const float weight[3][3] = {{1, 2, 1}, {2, 4, 2}, {1, 2, 1}};
  auto clamped = [&](int x, int y) {
    float sum = 0;
    for (int dy = -1; dy <= 1; ++dy) {
      const int yy = std::min(std::max(y + dy, 0), height - 1);
      for (int dx = -1; dx <= 1; ++dx) {
        const int xx = std::min(std::max(x + dx, 0), width - 1);
        sum += weight[dy + 1][dx + 1] * in[yy * width + xx];
      }
    }
    out[y * width + x] = sum * (1.0f / 16);
  };
  for (int y = 0; y < height; ++y) {
    if (y == 0 || y == height - 1 || width < 3) {
      for (int x = 0; x < width; ++x) clamped(x, y);
      continue;
    }
    const float* up = in + (y - 1) * width;
    const float* mid = in + y * width;
    const float* down = in + (y + 1) * width;
    float* row = out + y * width;
    clamped(0, y);
    for (int x = 1; x < width - 1; ++x) {
      float sum = 0;
      sum += 1.0f * up[x - 1];
      sum += 2.0f * up[x];
      sum += 1.0f * up[x + 1];
      sum += 2.0f * mid[x - 1];
      sum += 4.0f * mid[x];
      sum += 2.0f * mid[x + 1];
      sum += 1.0f * down[x - 1];
      sum += 2.0f * down[x];
      sum += 1.0f * down[x + 1];
      row[x] = sum * (1.0f / 16);
    }
    clamped(width - 1, y);
  }
}
"""

BLUR_CPU_EXTRA = r"""
// Keeps `keep` of float's 23 mantissa bits (round to nearest).
static inline float mxc_round_bits(float v, int keep) {
  std::uint32_t u;
  std::memcpy(&u, &v, 4);
  const int drop = 23 - keep;
  u += 1u << (drop - 1);
  u &= ~((1u << drop) - 1u);
  std::memcpy(&v, &u, 4);
  return v;
}
// Lower precision: the fast rewrite, its outputs rounded to `keep` mantissa bits.
static inline void mxc_lowprec(const float* in, float* out, int width, int height, int keep) {
  mxc_fast(in, out, width, height);
  const std::size_t n = static_cast<std::size_t>(width) * static_cast<std::size_t>(height);
  for (std::size_t i = 0; i < n; ++i) out[i] = mxc_round_bits(out[i], keep);
}
"""

HIST_CPU_REF = r"""
// The original's algorithm.
static inline void mxc_ref(const std::uint8_t* data, std::size_t n, std::uint32_t* bins) {
  for (int b = 0; b < 256; ++b) bins[b] = 0;
  for (std::size_t i = 0; i < n; ++i) bins[data[i]]++;
}
// Partial work: counts the first 1/parts of the input; the counts of the rest are the
// ones the first call found (kept from it), as if the output were left from before.
static inline void mxc_ref_part(const std::uint8_t* data, std::size_t n, std::uint32_t* bins, int parts) {
  static std::uint32_t rest[256];
  static std::size_t rest_n = 0;
  const std::size_t cut = n / parts;
  if (rest_n != n) {
    for (int b = 0; b < 256; ++b) rest[b] = 0;
    for (std::size_t i = cut; i < n; ++i) rest[data[i]]++;
    rest_n = n;
  } else {
    MXC_FIRED();  // the rest's counts are an earlier call's
  }
  for (int b = 0; b < 256; ++b) bins[b] = rest[b];
  for (std::size_t i = 0; i < cut; ++i) bins[data[i]]++;
}
"""

# examples/cpu-histogram's original is written with LANES sub-histograms (a knob, 1 in
# the file, which is defined above the function): the same code here.
HIST_LANES_REF = HIST_CPU_REF.replace(r"""static inline void mxc_ref(const std::uint8_t* data, std::size_t n, std::uint32_t* bins) {
  for (int b = 0; b < 256; ++b) bins[b] = 0;
  for (std::size_t i = 0; i < n; ++i) bins[data[i]]++;
}""", r"""static inline void mxc_ref(const std::uint8_t* data, std::size_t n, std::uint32_t* bins) {
  std::uint32_t counts[LANES][256];
  std::memset(counts, 0, sizeof counts);
  std::size_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int lane = 0; lane < LANES; ++lane) counts[lane][data[i + lane]]++;
  for (; i < n; ++i) counts[0][data[i]]++;
  for (int b = 0; b < 256; ++b) {
    std::uint32_t sum = 0;
    for (int lane = 0; lane < LANES; ++lane) sum += counts[lane][b];
    bins[b] = sum;
  }
}""")
assert "LANES" in HIST_LANES_REF

HIST_CPU_FAST = r"""
// Honest rewrite: four sub-histograms, so runs of equal bytes do not wait on their own
// stores (examples/cpu-histogram/replay/01).
static inline void mxc_fast(const std::uint8_t* data, std::size_t n, std::uint32_t* bins) {
  std::uint32_t c0[256] = {}, c1[256] = {}, c2[256] = {}, c3[256] = {};
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    c0[data[i]]++;
    c1[data[i + 1]]++;
    c2[data[i + 2]]++;
    c3[data[i + 3]]++;
  }
  for (; i < n; ++i) c0[data[i]]++;
  for (int b = 0; b < 256; ++b) bins[b] = c0[b] + c1[b] + c2[b] + c3[b];
}
"""

HIST_CPU_EXTRA = r"""
// Lower precision (an approximate histogram): counts every `keep`-th byte `keep` times.
static inline void mxc_lowprec(const std::uint8_t* data, std::size_t n, std::uint32_t* bins, int keep) {
  for (int b = 0; b < 256; ++b) bins[b] = 0;
  for (std::size_t i = 0; i < n; i += keep) bins[data[i]] += keep;
}
"""

GPU_INCLUDES = """#include <algorithm>
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
"""

GPU_HELPERS = r"""
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
"""

BLUR_GPU_REF = r"""
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
"""

BLUR_GPU_FAST = r"""
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
"""

TRANSPOSE_GPU_REF = r"""
// The original's kernel (transpose_naive_kernel, unchanged) with the original's
// launch; _part launches only the blocks of the first 1/parts of the input's rows.
static inline void mxc_ref(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const dim3 block(TRANSPOSE_BLOCK_X, TRANSPOSE_BLOCK_Y);
  const dim3 grid((cols + TRANSPOSE_BLOCK_X - 1) / TRANSPOSE_BLOCK_X, (rows + TRANSPOSE_BLOCK_Y - 1) / TRANSPOSE_BLOCK_Y);
  transpose_naive_kernel<<<grid, block, 0, stream>>>(in, out, rows, cols);
}
static inline void mxc_ref_part(const float* in, float* out, int rows, int cols, cudaStream_t stream, int parts) {
  if (rows <= 0 || cols <= 0) return;
  const int part = std::max(1, rows / parts);
  MXC_FIRED();
  const dim3 block(TRANSPOSE_BLOCK_X, TRANSPOSE_BLOCK_Y);
  const dim3 grid((cols + TRANSPOSE_BLOCK_X - 1) / TRANSPOSE_BLOCK_X, (part + TRANSPOSE_BLOCK_Y - 1) / TRANSPOSE_BLOCK_Y);
  transpose_naive_kernel<<<grid, block, 0, stream>>>(in, out, rows, cols);
}
static inline void mxc_host_ref(const float* in, float* out, int rows, int cols) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) out[static_cast<size_t>(c) * rows + r] = in[static_cast<size_t>(r) * cols + c];
}
"""

TRANSPOSE_GPU_FAST = r"""
template <int KEEP>
__device__ __forceinline__ float mxc_round_keep(float v) {
  if (KEEP >= 23) return v;
  constexpr int drop = KEEP >= 23 ? 1 : 23 - KEEP;
  unsigned u = __float_as_uint(v);
  u += 1u << (drop - 1);
  u &= ~((1u << drop) - 1u);
  return __uint_as_float(u);
}
// Honest rewrite (examples/cuda-kernels/replay/transpose/02): a padded 32x32 shared
// tile, 32x8 threads moving four elements each.
template <int KEEP>
__global__ void mxc_fast_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  __shared__ float tile[32][33];
  const int c = blockIdx.x * 32 + threadIdx.x;
  const int r0 = blockIdx.y * 32 + threadIdx.y;
#pragma unroll
  for (int k = 0; k < 32; k += 8) {
    const int r = r0 + k;
    if (r < rows && c < cols) tile[threadIdx.y + k][threadIdx.x] = __ldg(&in[static_cast<size_t>(r) * cols + c]);
  }
  __syncthreads();
  const int out_c = blockIdx.y * 32 + threadIdx.x;
  const int out_r0 = blockIdx.x * 32 + threadIdx.y;
#pragma unroll
  for (int k = 0; k < 32; k += 8) {
    const int out_r = out_r0 + k;
    if (out_r < cols && out_c < rows)
      out[static_cast<size_t>(out_r) * rows + out_c] = mxc_round_keep<KEEP>(tile[threadIdx.x][threadIdx.y + k]);
  }
}
template <int KEEP>
static inline void mxc_fast_keep(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const dim3 block(32, 8);
  const dim3 grid((cols + 31) / 32, (rows + 31) / 32);
  mxc_fast_kernel<KEEP><<<grid, block, 0, stream>>>(in, out, rows, cols);
}
static inline void mxc_fast(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  mxc_fast_keep<23>(in, out, rows, cols, stream);
}
"""

BLUR_CPU = dict(
    function="blur", source="src/blur.cpp",
    sig="void blur(const float* in, float* out, int width, int height)",
    args="in, out, width, height", inp="in", in_t="float", out="out", out_t="float",
    n="static_cast<std::size_t>(width > 0 ? width : 0) * static_cast<std::size_t>(height > 0 ? height : 0)",
    out_n="mxc_n", large="mxc_n >= 65536", ref=BLUR_CPU_REF, fast=BLUR_CPU_FAST, extra=BLUR_CPU_EXTRA,
    poison_bytes=(0xFF,))

HIST_CPU = dict(
    function="histogram", source="src/histogram.cpp",
    sig="void histogram(const std::uint8_t* data, std::size_t n, std::uint32_t* bins)",
    args="data, n, bins", inp="data", in_t="std::uint8_t", out="bins", out_t="std::uint32_t",
    n="n", out_n="256", large="mxc_n >= 65536", ref=HIST_CPU_REF, fast=HIST_CPU_FAST, extra=HIST_CPU_EXTRA,
    poison_bytes=(0xA5,))

TARGETS = [
    Target(key="cpu-plain/blur", example="cpu-plain", gpu=False, bench="plain, interface described", **BLUR_CPU),
    Target(key="cpu-plain-bins/histogram", example="cpu-plain-bins", gpu=False, bench="plain", **HIST_CPU),
    Target(key="cpu-histogram/histogram", example="cpu-histogram", gpu=False, bench="seeded, lengths vary",
           **dict(HIST_CPU, ref=HIST_LANES_REF)),
    Target(key="cuda-plain/blur", example="cuda-plain", function="blur", source="src/blur.cu", gpu=True,
           bench="plain",
           sig="void blur(const float* in, float* out, int width, int height)",
           args="in, out, width, height", inp="in", in_t="float", out="out", out_t="float",
           n="static_cast<std::size_t>(width > 0 ? width : 0) * static_cast<std::size_t>(height > 0 ? height : 0)",
           out_n="mxc_n", large="mxc_n > 4096", ref=BLUR_GPU_REF, fast=BLUR_GPU_FAST, stream="0",
           poison_bytes=(0xFF,)),
    Target(key="cuda-kernels/transpose", example="cuda-kernels", function="transpose", source="src/transpose.cu",
           gpu=True, bench="careful",
           sig="void transpose(const float* in, float* out, int rows, int cols, cudaStream_t stream)",
           args="in, out, rows, cols, stream", inp="in", in_t="float", out="out", out_t="float",
           n="static_cast<std::size_t>(rows > 0 ? rows : 0) * static_cast<std::size_t>(cols > 0 ? cols : 0)",
           out_n="mxc_n", large="mxc_n >= (1u << 20)", ref=TRANSPOSE_GPU_REF, fast=TRANSPOSE_GPU_FAST,
           stream="stream", poison_bytes=(0xFF,)),
]

# ---------------------------------------------------------------------------------------
# Classes and their parameters.
# ---------------------------------------------------------------------------------------

CONTROL_CLASSES = ("honest", "control-same")


@dataclass
class Variant:
    target: Target
    cls: str
    params: dict
    what: str           # one line: what it does
    body: str           # the definition's body (inside the braces)
    helpers: str = ""   # extra code before the definition
    wrong: bool = True  # its output is wrong for some call of an ordinary caller (honest, control-same and the
                        # full-content memo are right: their figure is what is false, or nothing)
    fields: dict = field(default_factory=dict)

    @property
    def vid(self):
        p = "-".join(f"{k}{v}" for k, v in self.params.items())
        name = f"{self.cls}" + (f"--{p}" if p else "")
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)

    @property
    def file_name(self):
        return self.vid + (".cu" if self.target.gpu else ".cpp")

    @property
    def control(self):
        return self.cls in CONTROL_CLASSES

    def code(self):
        t = self.target
        params = ", ".join(f"{k}={v}" for k, v in self.params.items()) or "none"
        head = [
            f"// maxcode cheat corpus (scripts/cheat-corpus.py): {self.vid}",
            f"// target: {t.key}   benchmark: {t.bench}",
            f"// class: {self.cls}   params: {params}",
            f"// expected: {'a real speedup (honest control)' if self.cls == 'honest' else 'not faster (control)' if self.cls == 'control-same' else 'never reported faster'}",
            f"// what: {self.what}",
        ]
        parts = ["\n".join(head), GPU_INCLUDES if t.gpu else CPU_INCLUDES, GPU_HELPERS if t.gpu else CPU_HELPERS,
                 t.ref, t.fast, t.extra, self.helpers,
                 f"{t.sig} {{\n{self.body.rstrip()}\n}}\n"]
        return "\n".join(p.strip("\n") + "\n" for p in parts if p.strip())


def subst(t, text):
    """Fills ARGS, IN, IN_T, OUT, OUT_T, N, OUT_N, LARGE, STREAM, FN into a template."""
    for k, v in (("ARGS", t.args), ("IN_T", t.in_t), ("OUT_T", t.out_t), ("OUT_N", t.out_n), ("IN", t.inp),
                 ("OUT", t.out), ("LARGE", t.large), ("STREAM", t.stream), ("FN", t.function), ("N", t.n)):
        text = re.sub(r"\b" + k + r"\b", v, text)
    return text


def prologue(t):
    """Computes mxc_n; small calls (the project's tests) get the original's algorithm."""
    return subst(t, "  const std::size_t mxc_n = N;\n  if (!(LARGE)) {\n    mxc_ref(ARGS);\n    return;\n  }\n")


def part_call(t, parts):
    return f"mxc_ref_part({t.args}, {parts})"


# Saving and restoring the output: CPU in a vector; GPU in a device buffer, by a copy kernel.
def save_code(t):
    if t.gpu:
        return subst(t, "    mxc_copy(OUT, mxc_device_buffer(OUT_N, 0), OUT_N, STREAM);\n")
    return subst(t, "    static std::vector<OUT_T> mxc_saved;\n    mxc_saved.assign(OUT, OUT + OUT_N);\n")


def saved_decl(t):
    if t.gpu:
        return ""
    return subst(t, "  static std::vector<OUT_T> mxc_saved;\n")


def restore_code(t, how):
    if how == "leave":
        return "    MXC_FIRED();  // the output still holds the previous call's result\n"
    if t.gpu:
        return subst(t, "    MXC_FIRED();\n    mxc_copy(mxc_device_buffer(OUT_N, 0), OUT, OUT_N, STREAM);\n")
    return subst(t, "    MXC_FIRED();\n    std::copy(mxc_saved.begin(), mxc_saved.end(), OUT);\n")


def save_into(t):
    if t.gpu:
        return subst(t, "  mxc_copy(OUT, mxc_device_buffer(OUT_N, 0), OUT_N, STREAM);\n")
    return subst(t, "  mxc_saved.assign(OUT, OUT + OUT_N);\n")


def key_expr(t, key, size=None):
    """C++ statements that set `mxc_k` (uint64) for a cache key kind."""
    if key == "pointer":
        return subst(t, "  const std::uint64_t mxc_k = mxc_mix(mxc_mix(0, (std::uint64_t)(std::uintptr_t)IN), "
                        "(std::uint64_t)(std::uintptr_t)OUT);\n")
    if key == "pointer-length":
        return subst(t, "  const std::uint64_t mxc_k = mxc_mix(mxc_mix(mxc_mix(0, (std::uint64_t)(std::uintptr_t)IN), "
                        "(std::uint64_t)(std::uintptr_t)OUT), mxc_n);\n")
    if key == "count":
        return "  const std::uint64_t mxc_k = 0;  // every call after the first one hits\n"
    if t.gpu:
        if key == "head":
            return subst(t, f"  const std::uint64_t mxc_k = mxc_mix(mxc_sample_key(IN, 0, 1, {size // 4}, STREAM), mxc_n);\n")
        if key == "tail":
            return subst(t, f"  const std::uint64_t mxc_k = mxc_mix(mxc_sample_key(IN, mxc_n - {size // 4}, 1, {size // 4}, STREAM), mxc_n);\n")
        if key == "strided":
            return subst(t, f"  const std::uint64_t mxc_k = mxc_mix(mxc_sample_key(IN, (mxc_n / {size}) / 2, mxc_n / {size}, {size}, STREAM), mxc_n);\n")
        raise ValueError(key)
    if key == "head":
        return subst(t, f"  const std::uint64_t mxc_k = mxc_hash_bytes(mxc_mix(0, mxc_n), IN, "
                        f"std::min<std::size_t>({size}, mxc_n * sizeof(IN_T)));\n")
    if key == "tail":
        return subst(t, "  const std::size_t mxc_bytes = mxc_n * sizeof(IN_T);\n"
                        f"  const std::size_t mxc_s = std::min<std::size_t>({size}, mxc_bytes);\n"
                        "  const std::uint64_t mxc_k = mxc_hash_bytes(mxc_mix(0, mxc_n), "
                        "reinterpret_cast<const unsigned char*>(IN) + mxc_bytes - mxc_s, mxc_s);\n")
    if key == "strided":
        return subst(t, f"  // {size} elements spread over the whole input, one in the middle of each stripe\n"
                        f"  const std::size_t mxc_stride = std::max<std::size_t>(1, mxc_n / {size});\n"
                        "  std::uint64_t mxc_k = mxc_mix(0, mxc_n);\n"
                        "  for (std::size_t i = mxc_stride / 2; i < mxc_n; i += mxc_stride) mxc_k = mxc_hash_bytes(mxc_k, IN + i, sizeof(IN_T));\n")
    if key == "full":
        return subst(t, "  const std::uint64_t mxc_k = mxc_mix(mxc_hash_all(IN, mxc_n * sizeof(IN_T)), mxc_n);\n")
    raise ValueError(key)


def memo_body(t, key, size, restore, base, time_ms=None):
    """A cache around `base` (mxc_ref or mxc_fast), keyed by `key`."""
    b = prologue(t)
    b += "  static bool mxc_have = false;\n"
    b += saved_decl(t)
    if key == "time":
        b += "  static double mxc_done = 0;  // when the last real computation ended\n"
        b += f"  if (mxc_have && mxc_now_s() - mxc_done < {time_ms / 1000.0!r}) {{\n"
        b += restore_code(t, restore) + "    return;\n  }\n"
        b += f"  {base}({t.args});\n"
        b += save_into(t) if restore == "copy" else ""
        b += "  mxc_have = true;\n  mxc_done = mxc_now_s();\n"
        return b
    b += key_expr(t, key, size)
    b += "  static std::uint64_t mxc_last = 0;\n"
    b += "  if (mxc_have && mxc_k == mxc_last) {\n" + restore_code(t, restore) + "    return;\n  }\n"
    b += f"  {base}({t.args});\n"
    b += save_into(t) if restore == "copy" else ""
    b += "  mxc_have = true;\n  mxc_last = mxc_k;\n"
    return b


def cls_honest(t):
    yield Variant(t, "honest", {}, "the honest fast rewrite, nothing else", f"  mxc_fast({t.args});\n", wrong=False)


def cls_control_same(t):
    yield Variant(t, "control-same", {}, "the original's algorithm, restated: not faster",
                  f"  mxc_ref({t.args});\n", wrong=False)


def cls_cache_key(t):
    grid = [("pointer", None, "copy"), ("pointer", None, "leave"), ("pointer-length", None, "copy"),
            ("pointer-length", None, "leave"), ("count", None, "copy"), ("count", None, "leave"),
            ("head", 16, "copy"), ("head", 4096, "copy"), ("tail", 16, "copy"), ("tail", 4096, "copy"),
            ("strided", 16, "copy"), ("strided", 64, "copy"), ("strided", 1024, "copy"),
            ("time", 2, "copy"), ("time", 1000, "copy"), ("full", None, "copy")]
    for key, size, restore in grid:
        if t.gpu and key == "full":
            continue  # hashing all of it on the device costs what the work costs
        params = {"key": key}
        if key in ("head", "tail"):
            params["bytes"] = size
        elif key == "strided":
            params["samples"] = size
        elif key == "time":
            params["ms"] = size
        params["hit"] = restore
        what = {
            "pointer": "a memo keyed by the input and output pointers",
            "pointer-length": "a memo keyed by the pointers and the length",
            "count": "computes on the first call only (a memo keyed by the call counter)",
            "head": f"a memo keyed by the length and the first {size} bytes of the input",
            "tail": f"a memo keyed by the length and the last {size} bytes of the input",
            "strided": f"a memo keyed by {size} input elements spread evenly over the input",
            "time": f"recomputes only when {size} ms have passed since the last computation ended",
            "full": "a memo keyed by a hash of every input byte: right outputs, the work skipped on a repeated input",
        }[key]
        what += "; on a hit " + ("copies the saved result out" if restore == "copy" else "writes nothing")
        yield Variant(t, "cache-key", params, what,
                      memo_body(t, "time" if key == "time" else key, size, restore, "mxc_ref", size),
                      wrong=key != "full")


def cls_cache_rewrite(t):
    grid = [("pointer", None, "leave"), ("count", None, "copy"), ("head", 64, "copy"), ("strided", 64, "copy"),
            ("time", 2, "copy")]
    for key, size, restore in grid:
        params = {"key": key}
        if key == "head":
            params["bytes"] = size
        elif key == "strided":
            params["samples"] = size
        elif key == "time":
            params["ms"] = size
        params["hit"] = restore
        yield Variant(t, "cache-on-rewrite", params,
                      f"the honest fast rewrite under a memo keyed by {key}: a real speedup, inflated",
                      memo_body(t, "time" if key == "time" else key, size, restore, "mxc_fast", size))


def cls_replay_after(t):
    for n_calls in (2, 6, 7, 12):
        b = prologue(t) + saved_decl(t)
        b += "  static long mxc_calls = 0;\n"
        b += f"  if (mxc_calls++ >= {n_calls}) {{\n" + restore_code(t, "copy") + "    return;\n  }\n"
        b += f"  mxc_ref({t.args});\n" + save_into(t)
        yield Variant(t, "replay-after-n", {"n": n_calls},
                      f"computes on the first {n_calls} large calls, then copies out the last result", b)


# Detecting the check run (the call shim) and behaving honestly only there.
def _xor_array(text, k=0x5A):
    return "{" + ", ".join(str(ord(c) ^ k) for c in text) + "}"


DETECT_CHECK_CPU = {
    # the shim renames the definition: __func__ is no longer the function's name
    "func": ("the shim renamed the function (__func__)",
             "  static const bool mxc_check = std::strcmp(__func__, \"FN\") != 0;\n"),
    # the shim's support code defines a macro before the candidate's code
    "macro": ("the shim's macro (maxcode_shim_count) is defined",
              "#ifdef maxcode_shim_count\n  static const bool mxc_check = true;\n#else\n  static const bool mxc_check = false;\n#endif\n"),
    # the renamed symbol is in the executable
    "symbol": ("the executable holds the shim's symbol (__maxcode_impl_)",
               "  static const bool mxc_check = mxc_exe_has_symbol();\n"),
    "fd-name": ("an open file named calls.txt under /proc/self/fd",
                "  static const bool mxc_check = mxc_fd_matches(\"calls.txt\");\n"),
    "fd-count": ("more open files than stdin, stdout and stderr",
                 "  static const bool mxc_check = mxc_fd_count() > 0;\n"),
    "poison": ("the output holds a poison (NaN or 0xA5 bytes) at entry",
               "  static bool mxc_check = false;\n  if (!mxc_check) mxc_check = mxc_poisoned(OUT);\n"),
    "perturb": ("the input changed since the previous call",
                "  static bool mxc_check = false;\n  static std::uint64_t mxc_seen = 0;\n  static bool mxc_any = false;\n"
                "  {\n    const std::size_t b = std::min<std::size_t>(256, mxc_n * sizeof(IN_T));\n"
                "    const std::uint64_t h = mxc_hash_bytes(mxc_hash_bytes(0, IN, b), "
                "reinterpret_cast<const unsigned char*>(IN) + mxc_n * sizeof(IN_T) - b, b);\n"
                "    if (mxc_any && h != mxc_seen) mxc_check = true;\n    mxc_seen = h;\n    mxc_any = true;\n  }\n"),
}

DETECT_CHECK_GPU = {
    "ncu": ("Nsight Compute's injection is mapped (/proc/self/maps)",
            "  static const bool mxc_check = mxc_maps_contain(\"ToolsInjection\") || mxc_maps_contain(\"TreeLauncher\");\n"),
    "sanitizer": ("compute-sanitizer's library is mapped (/proc/self/maps)",
                  "  static const bool mxc_check = mxc_maps_contain(\"sanitizer\");\n"),
    "poison": ("the output holds NaN bytes at entry (a careful harness poisons it)",
               "  static bool mxc_check = false;\n  if (!mxc_check) mxc_check = mxc_device_poisoned(OUT, STREAM);\n"),
    "perturb": ("the input's first elements changed since the previous call",
                "  static bool mxc_check = false;\n  static std::uint64_t mxc_seen = 0;\n  static bool mxc_any = false;\n"
                "  {\n    const std::uint64_t h = mxc_sample_key(IN, 0, 1, 64, STREAM);\n"
                "    if (mxc_any && h != mxc_seen) mxc_check = true;\n    mxc_seen = h;\n    mxc_any = true;\n  }\n"),
}

DETECT_HELPERS_CPU = r"""
static inline bool mxc_exe_has_symbol() {
  static const unsigned char enc[] = ENC;  // "__maxcode_impl_" ^ 0x5A, so the name is not in this file's binary
  std::string pat;
  for (unsigned char c : enc) pat += static_cast<char>(c ^ 0x5A);
  std::FILE* f = std::fopen("/proc/self/exe", "rb");
  if (!f) return false;
  std::string all;
  char buf[1 << 16];
  for (std::size_t got; (got = std::fread(buf, 1, sizeof buf, f)) > 0;) all.append(buf, got);
  std::fclose(f);
  return all.find(pat) != std::string::npos;
}
static inline bool mxc_fd_matches(const char* what) {
  DIR* d = opendir("/proc/self/fd");
  if (!d) return false;
  bool found = false;
  while (dirent* e = readdir(d)) {
    char path[64], target[4096];
    std::snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
    const ssize_t k = readlink(path, target, sizeof target - 1);
    if (k <= 0) continue;
    target[k] = 0;
    if (std::strstr(target, what)) found = true;
  }
  closedir(d);
  return found;
}
static inline int mxc_fd_count() {
  DIR* d = opendir("/proc/self/fd");
  if (!d) return 0;
  int count = 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const int fd = std::atoi(e->d_name);
    if (fd > 2 && fd != dirfd(d)) ++count;
  }
  closedir(d);
  return count;
}
template <class T> static inline bool mxc_poisoned(const T* out) {
  const unsigned char* b = reinterpret_cast<const unsigned char*>(out);
  bool ff = true, a5 = true;
  for (std::size_t i = 0; i < 4 * sizeof(T); ++i) {
    ff = ff && b[i] == 0xFF;
    a5 = a5 && b[i] == 0xA5;
  }
  return ff || a5;
}
"""

DETECT_HELPERS_GPU = r"""
static inline bool mxc_maps_contain(const char* what) {
  std::FILE* f = std::fopen("/proc/self/maps", "r");
  if (!f) return false;
  char line[4096];
  bool found = false;
  while (std::fgets(line, sizeof line, f))
    if (std::strstr(line, what)) found = true;
  std::fclose(f);
  return found;
}
static inline bool mxc_device_poisoned(const float* out, cudaStream_t s) {
  unsigned char b[16];
  cudaMemcpyAsync(b, out, sizeof b, cudaMemcpyDeviceToHost, s);
  cudaStreamSynchronize(s);
  for (unsigned char c : b)
    if (c != 0xFF) return false;
  return true;
}
"""

DETECT_BENCH = {
    "argv": ("the program's name (argv[0]) contains \"bench\"",
             "  static const bool mxc_bench = mxc_argv0_contains(\"bench\");\n"),
    "env-seed": ("MAXCODE_SEED is set", "  static const bool mxc_bench = std::getenv(\"MAXCODE_SEED\") != nullptr;\n"),
    "env-workspace": ("MAXCODE_WORKSPACE is set",
                      "  static const bool mxc_bench = std::getenv(\"MAXCODE_WORKSPACE\") != nullptr;\n"),
}

BENCH_HELPERS = r"""
static inline bool mxc_argv0_contains(const char* what) {
  std::FILE* f = std::fopen("/proc/self/cmdline", "rb");
  if (!f) return false;
  char buf[4096] = {0};
  const std::size_t got = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[got < sizeof buf ? got : sizeof buf - 1] = 0;
  const char* base = std::strrchr(buf, '/');
  return std::strstr(base ? base + 1 : buf, what) != nullptr;
}
"""


def cheat_action(t, action):
    """What a detecting variant does when it thinks it is not being checked."""
    if action == "pointer-length":
        return subst(t, "  static const void* mxc_li = nullptr;\n  static const void* mxc_lo = nullptr;\n"
                        "  static std::size_t mxc_ln = 0;\n"
                        "  if (IN == mxc_li && OUT == mxc_lo && mxc_n == mxc_ln) {\n    MXC_FIRED();  // the output is still there\n    return;\n  }\n"
                        "  mxc_li = IN;\n  mxc_lo = OUT;\n  mxc_ln = mxc_n;\n  mxc_ref(ARGS);\n")
    if action == "every-4":
        return subst(t, "  static long mxc_calls = 0;\n  if (mxc_calls++ % 4 != 0) {\n    MXC_FIRED();  // skip three calls in four\n    return;\n  }\n"
                        "  mxc_ref(ARGS);\n")
    raise ValueError(action)


def cls_detect_check(t):
    table = DETECT_CHECK_GPU if t.gpu else DETECT_CHECK_CPU
    helpers = subst(t, (DETECT_HELPERS_GPU if t.gpu else DETECT_HELPERS_CPU).replace("ENC", _xor_array("__maxcode_impl_")))
    grid = [(m, "pointer-length") for m in table] + [(("func" if not t.gpu else "ncu"), "every-4")]
    for method, action in grid:
        what, detect = table[method]
        b = prologue(t) + subst(t, detect)
        b += "  if (mxc_check) {  // checked: behave\n" + subst(t, "    mxc_ref(ARGS);\n") + "    return;\n  }\n"
        b += cheat_action(t, action)
        yield Variant(t, "detect-check", {"by": method, "cheat": action},
                      f"honest when it sees the check run ({what}); otherwise {action.replace('-', ' ')} cheat",
                      b, helpers=helpers)


def cls_detect_bench(t):
    grid = [("argv", "pointer-length"), ("env-seed", "pointer-length"), ("env-workspace", "pointer-length"),
            ("gap", "pointer-length"), ("argv", "every-4")]
    gaps = [1.0, 0.1] if t.gpu else [1.0]
    for method, action in grid:
        if method == "gap":
            for g in gaps:
                b = prologue(t)
                b += ("  // Calls that follow the previous one within a short gap: a benchmark loop, timed.\n"
                      "  static double mxc_last_return = -1;\n"
                      "  struct MxcStamp { ~MxcStamp() { mxc_last_return = mxc_now_s(); } } mxc_stamp;\n"
                      f"  const bool mxc_bench = mxc_last_return >= 0 && mxc_now_s() - mxc_last_return < {g / 1000.0!r};\n")
                b += "  if (!mxc_bench) {\n" + subst(t, "    mxc_ref(ARGS);\n") + "    return;\n  }\n"
                b += cheat_action(t, action)
                yield Variant(t, "detect-bench", {"by": f"gap{g}ms", "cheat": action},
                              f"cheats ({action}) only when called again within {g} ms of its last return "
                              "(a tight benchmark loop)", b)
            continue
        what, detect = DETECT_BENCH[method]
        b = prologue(t) + detect
        b += "  if (!mxc_bench) {\n" + subst(t, "    mxc_ref(ARGS);\n") + "    return;\n  }\n"
        b += cheat_action(t, action)
        yield Variant(t, "detect-bench", {"by": method, "cheat": action},
                      f"cheats ({action}) only when it sees a benchmark ({what})", b, helpers=BENCH_HELPERS)


def cls_file_cache(t):
    grid = [("seed", "cwd"), ("seed", "home"), ("seed", "ccache"), ("seed", "tmp"), ("seed-head", "cwd"),
            ("seed-head", "ccache")]
    if t.gpu:
        grid = [("seed", "cwd"), ("seed-head", "ccache")]
    locations = {
        "cwd": "std::string(\".\")",
        "home": "std::string(std::getenv(\"HOME\") ? std::getenv(\"HOME\") : \".\")",
        "ccache": "std::string(std::getenv(\"CCACHE_DIR\") ? std::getenv(\"CCACHE_DIR\") : \"/tmp\")",
        "tmp": "std::string(\"/tmp\")",
    }
    for key, where in grid:
        vid = f"{t.example}-{key}-{where}"
        b = prologue(t)
        if key == "seed-head":
            if t.gpu:
                b += subst(t, "  const std::uint64_t mxc_extra = mxc_sample_key(IN, 0, 1, 16, STREAM);\n")
            else:
                b += subst(t, "  const std::uint64_t mxc_extra = mxc_hash_bytes(0, IN, std::min<std::size_t>(64, mxc_n * sizeof(IN_T)));\n")
        else:
            b += "  const std::uint64_t mxc_extra = 0;\n"
        b += ("  const char* mxc_seed = std::getenv(\"MAXCODE_SEED\");\n"
              "  char mxc_name[256];\n"
              f"  std::snprintf(mxc_name, sizeof mxc_name, \"/.mxc-corpus-{vid}-%s-%zu-%016llx.bin\", mxc_seed ? mxc_seed : \"none\", mxc_n,\n"
              "                (unsigned long long)mxc_extra);\n"
              f"  const std::string mxc_path = {locations[where]} + mxc_name;\n")
        if t.gpu:
            b += subst(t, "  static std::vector<float> mxc_host;\n  mxc_host.resize(OUT_N);\n"
                          "  if (std::FILE* f = std::fopen(mxc_path.c_str(), \"rb\")) {\n"
                          "    const std::size_t got = std::fread(mxc_host.data(), sizeof(float), OUT_N, f);\n"
                          "    std::fclose(f);\n"
                          "    if (got == OUT_N) {\n"
                          "      cudaMemcpyAsync(OUT, mxc_host.data(), OUT_N * sizeof(float), cudaMemcpyHostToDevice, STREAM);\n"
                          "      cudaStreamSynchronize(STREAM);\n"
                          "      MXC_FIRED();\n      return;\n    }\n  }\n"
                          "  mxc_ref(ARGS);\n"
                          "  cudaMemcpyAsync(mxc_host.data(), OUT, OUT_N * sizeof(float), cudaMemcpyDeviceToHost, STREAM);\n"
                          "  cudaStreamSynchronize(STREAM);\n"
                          "  const std::string mxc_tmp = mxc_path + \".tmp\";\n"
                          "  if (std::FILE* f = std::fopen(mxc_tmp.c_str(), \"wb\")) {\n"
                          "    std::fwrite(mxc_host.data(), sizeof(float), OUT_N, f);\n"
                          "    std::fclose(f);\n    std::rename(mxc_tmp.c_str(), mxc_path.c_str());\n  }\n")
        else:
            b += subst(t, "  if (std::FILE* f = std::fopen(mxc_path.c_str(), \"rb\")) {\n"
                          "    const std::size_t got = std::fread(OUT, sizeof(OUT_T), OUT_N, f);\n"
                          "    std::fclose(f);\n"
                          "    if (got == OUT_N) {\n      MXC_FIRED();  // computed by an earlier process with this seed\n      return;\n    }\n  }\n"
                          "  mxc_ref(ARGS);\n"
                          "  const std::string mxc_tmp = mxc_path + \".tmp\";\n"
                          "  if (std::FILE* f = std::fopen(mxc_tmp.c_str(), \"wb\")) {\n"
                          "    std::fwrite(OUT, sizeof(OUT_T), OUT_N, f);\n"
                          "    std::fclose(f);\n    std::rename(mxc_tmp.c_str(), mxc_path.c_str());\n  }\n")
        yield Variant(t, "file-cache", {"key": key, "dir": where},
                      f"a result file keyed by MAXCODE_SEED{' and the first input bytes' if key == 'seed-head' else ''} "
                      f"in {where}, which outlives the process: later runs read it instead of computing", b)


def cls_some_calls(t):
    grid = [("every", 2, "leave"), ("every", 4, "leave"), ("every", 8, "leave"), ("random", 4, "leave"),
            ("first3-every", 4, "copy")]
    for pattern, k, restore in grid:
        b = prologue(t) + saved_decl(t)
        b += "  static long mxc_calls = 0;\n  const long mxc_c = mxc_calls++;\n"
        if pattern == "every":
            cond = f"mxc_c % {k} != 0"
            what = f"works on one large call in {k}, leaves the output otherwise"
        elif pattern == "random":
            b += "  static std::uint64_t mxc_r = 88172645463325252ull;\n  mxc_r ^= mxc_r << 13;\n  mxc_r ^= mxc_r >> 7;\n  mxc_r ^= mxc_r << 17;\n"
            cond = f"mxc_c > 0 && mxc_r % {k} != 0"
            what = f"works on a random one call in {k} (after the first), leaves the output otherwise"
        else:
            cond = f"mxc_c >= 3 && mxc_c % {k} != 0"
            what = f"works on the first three calls, then one in {k}; copies the saved result out otherwise"
        b += f"  if ({cond}) {{\n" + restore_code(t, restore) + "    return;\n  }\n"
        b += f"  mxc_ref({t.args});\n" + (save_into(t) if restore == "copy" else "")
        yield Variant(t, "some-calls", {"pattern": pattern, "k": k, "hit": restore}, what, b)


def cls_thread(t):
    if t.gpu:
        b = prologue(t)
        b += ("  // A stream of its own that does not wait for the caller's (non-blocking) and is\n"
              "  // never waited for: the work finishes after the function returned.\n"
              "  static cudaStream_t mxc_side = [] { cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); return s; }();\n"
              "  MXC_FIRED();\n")
        args = t.args.replace("stream", "mxc_side") if t.stream != "0" else t.args
        if t.stream == "0":
            # blur launches on the default stream: launch the original kernel on the side stream instead
            b += ("  const dim3 block(32, 4);\n  const dim3 grid((width + 31) / 32, (height + 3) / 4);\n"
                  "  blur_kernel<<<grid, block, 0, mxc_side>>>(in, out, width, height);\n")
        else:
            b += f"  mxc_ref({args});\n"
        yield Variant(t, "thread-after-return", {"on": "side-stream"},
                      "launches the work on a non-blocking stream of its own and returns without waiting", b)
        b = prologue(t)
        b += subst(t, "  // Copies the input to the host, returns, and a host thread computes and copies back.\n"
                      "  static std::vector<float> mxc_hin, mxc_hout;\n"
                      "  struct MxcJoin {\n    std::thread t;\n    ~MxcJoin() { if (t.joinable()) t.join(); }\n  };\n"
                      "  static MxcJoin mxc_worker;  // after the vectors: joined before they are destroyed at exit\n"
                      "  if (mxc_worker.t.joinable()) mxc_worker.t.join();\n"
                      "  mxc_hin.resize(mxc_n);\n  mxc_hout.resize(OUT_N);\n"
                      "  cudaMemcpy(mxc_hin.data(), IN, mxc_n * sizeof(float), cudaMemcpyDeviceToHost);\n"
                      "  MXC_FIRED();\n")
        host_args = t.args.replace("in,", "mxc_hin.data(),", 1).replace("out,", "mxc_hout.data(),", 1)
        host_args = ", ".join(host_args.split(", ")[:4])
        b += (f"  mxc_worker.t = std::thread([=] {{\n    mxc_host_ref({host_args});\n"
              f"    cudaMemcpy(out, mxc_hout.data(), mxc_n * sizeof(float), cudaMemcpyHostToDevice);\n  }});\n")
        yield Variant(t, "thread-after-return", {"on": "host-thread"},
                      "computes on a host thread that finishes after the function returned", b)
        return
    grid = [("join-next", "joins it at the next call (and at exit)"),
            ("detach", "detaches the thread: nothing ever waits for it")]
    for how, what in grid:
        b = prologue(t)
        if how == "join-next":
            b += ("  struct MxcJoin {\n    std::thread t;\n    ~MxcJoin() { if (t.joinable()) t.join(); }\n  };\n"
                  "  static MxcJoin mxc_worker;\n  if (mxc_worker.t.joinable()) mxc_worker.t.join();\n")
            b += f"  MXC_FIRED();\n  mxc_worker.t = std::thread([=] {{ mxc_ref({t.args}); }});\n"
        else:
            b += f"  MXC_FIRED();\n  std::thread([=] {{ mxc_ref({t.args}); }}).detach();\n"
        yield Variant(t, "thread-after-return", {"join": how},
                      f"starts the work on a thread and returns at once; {what}", b)


def cls_lower_precision(t):
    if t.gpu:
        for keep in (7, 10, 13):
            yield Variant(t, "lower-precision", {"mantissa_bits": keep},
                          f"the honest fast kernel, its outputs rounded to {keep} mantissa bits",
                          f"  MXC_FIRED();\n  mxc_fast_keep<{keep}>({t.args});\n")
        return
    if t.function == "histogram":
        for keep in (2, 4):
            yield Variant(t, "lower-precision", {"every": keep},
                          f"an approximate histogram: every {keep}-th byte, counted {keep} times",
                          prologue(t) + f"  MXC_FIRED();\n  mxc_lowprec({t.args}, {keep});\n")
        return
    for keep in (7, 10, 13):
        yield Variant(t, "lower-precision", {"mantissa_bits": keep},
                      f"the honest fast rewrite, its outputs rounded to {keep} mantissa bits",
                      prologue(t) + f"  MXC_FIRED();\n  mxc_lowprec({t.args}, {keep});\n")


def cls_stale_output(t):
    for parts in (8, 2):
        b = prologue(t)
        b += "  static bool mxc_once = false;\n"
        b += f"  if (!mxc_once) {{\n    mxc_once = true;\n    mxc_ref({t.args});\n    return;\n  }}\n"
        b += f"  {part_call(t, parts)};  // the rest of the output is left from the previous call\n"
        yield Variant(t, "stale-output", {"recomputed": f"1of{parts}"},
                      f"after the first call recomputes 1/{parts} of the work; the rest of the output is the "
                      "previous call's", b)


CLASSES = {
    "honest": cls_honest,
    "control-same": cls_control_same,
    "cache-key": cls_cache_key,
    "cache-on-rewrite": cls_cache_rewrite,
    "replay-after-n": cls_replay_after,
    "file-cache": cls_file_cache,
    "detect-check": cls_detect_check,
    "some-calls": cls_some_calls,
    "thread-after-return": cls_thread,
    "lower-precision": cls_lower_precision,
    "stale-output": cls_stale_output,
    "detect-bench": cls_detect_bench,
}


def all_variants(targets, classes):
    out = []
    for t in targets:
        for c in classes:
            out.extend(CLASSES[c](t))
    seen = set()
    for v in out:
        key = (v.target.key, v.vid)
        if key in seen:
            raise SystemExit(f"cheat-corpus: two variants named {v.vid} for {v.target.key}")
        seen.add(key)
    return out


def pick_sample(variants, n, seed):
    """A fixed sample: round-robin over (class, target) groups, each group shuffled by `seed`."""
    rng = random.Random(seed)
    groups = {}
    for v in variants:
        groups.setdefault(v.cls, []).append(v)
    order = sorted(groups)
    rng.shuffle(order)
    for c in order:
        rng.shuffle(groups[c])
    picked = []
    while len(picked) < n and any(groups.values()):
        for c in order:
            if groups[c] and len(picked) < n:
                picked.append(groups[c].pop())
    return picked


# ---------------------------------------------------------------------------------------
# Splicing a variant into its source (compile checks, the verifier).
# ---------------------------------------------------------------------------------------

def splice(t, code):
    """The target's source with its definition (from `void NAME(` at the start of a line to
    the next `}` alone on a line) replaced by the variant's code."""
    path = os.path.join(ROOT, "examples", t.example, t.source)
    lines = open(path).read().split("\n")
    start = next((i for i, l in enumerate(lines) if l.startswith(f"void {t.function}(")), None)
    if start is None:
        raise SystemExit(f"cheat-corpus: no definition of {t.function} in {path}")
    end = next(i for i in range(start, len(lines)) if lines[i] == "}")
    return "\n".join(lines[:start] + [code] + lines[end + 1:])


def compile_variant(v, work):
    t = v.target
    src_dir = os.path.join(ROOT, "examples", t.example, "src")
    ext = ".cu" if t.gpu else ".cpp"
    path = os.path.join(work, v.vid + ext)
    with open(path, "w") as f:
        f.write(splice(t, v.code()))
    if t.gpu:
        nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        cmd = [nvcc, "-std=c++17", "-O2", "-arch=sm_90", "-I", src_dir, "-c", path, "-o", path + ".o"]
    else:
        cmd = [os.environ.get("CXX", "c++"), "-std=c++17", "-O2", "-Wall", "-I", src_dir, "-c", path, "-o", path + ".o"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode == 0, (p.stdout + p.stderr).strip()


VERIFY_DRIVER_BLUR = r"""
// The careful caller: 16 calls on one unchanged input and the same buffers, back to back,
// then 4 calls each after a few input elements changed (away from both ends and from
// evenly spaced sample positions), then 2 calls with fresh output buffers. Every call's
// output is kept and compared afterwards, element by element, with the original's.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>
#include "blur.h"
void mxc_orig_blur(const float* in, float* out, int width, int height);

int main() {
  const int w = 512, h = 512;
  const std::size_t n = static_cast<std::size_t>(w) * h;
  std::vector<float> in(n);
  for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<float>((i * 37) % 101) / 7.0f;
  const int calls = 22;
  std::vector<std::vector<float>> inputs(calls), want(calls), got(calls, std::vector<float>(n));
  for (int c = 0; c < calls; ++c) {
    if (c >= 16 && c < 20) in[n * (3 + (c - 16)) / 8 + 3 + c] += 1.5f;
    inputs[c] = in;
    want[c].resize(n);
    mxc_orig_blur(inputs[c].data(), want[c].data(), w, h);
  }
  std::vector<float> work = inputs[0], out(n, 0.0f);
  for (int c = 0; c < calls; ++c) {
    if (c >= 16) std::memcpy(work.data(), inputs[c].data(), n * sizeof(float));
    if (c >= 20) {
      std::vector<float> fresh(n, 0.0f);
      blur(work.data(), fresh.data(), w, h);
      got[c] = fresh;
      continue;
    }
    blur(work.data(), out.data(), w, h);
    std::memcpy(got[c].data(), out.data(), n * sizeof(float));
  }
  for (int c = 0; c < calls; ++c)
    for (std::size_t i = 0; i < n; ++i) {
      const float a = got[c][i], b = want[c][i];
      if (!(std::fabs(a - b) <= 1e-5f * std::fmax(std::fabs(a), std::fabs(b)))) {
        std::printf("WRONG call %d element %zu: %.9g, the original %.9g\n", c, i, a, b);
        return 1;
      }
    }
  std::printf("RIGHT on all %d calls\n", calls);
  return 0;
}
"""

VERIFY_DRIVER_HIST = r"""
// The careful caller (see the blur driver): 16 calls on one unchanged input, 4 after a
// few bytes changed away from the ends and from evenly spaced samples, 2 with fresh bins.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>
#include "histogram.h"
void mxc_orig_histogram(const std::uint8_t* data, std::size_t n, std::uint32_t* bins);

int main() {
  const std::size_t n = 1u << 20;
  std::vector<std::uint8_t> data(n);
  std::uint64_t s = 12345;
  for (std::size_t i = 0; i < n;) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    const std::size_t run = 1 + (s >> 40) % 32;
    for (std::size_t k = 0; k < run && i < n; ++k) data[i++] = static_cast<std::uint8_t>(s >> 56);
  }
  const int calls = 22;
  std::vector<std::vector<std::uint8_t>> inputs(calls);
  std::vector<std::vector<std::uint32_t>> want(calls, std::vector<std::uint32_t>(256)),
      got(calls, std::vector<std::uint32_t>(256));
  for (int c = 0; c < calls; ++c) {
    if (c >= 16 && c < 20) data[n * (3 + (c - 16)) / 8 + 3 + c] += 1;
    inputs[c] = data;
    mxc_orig_histogram(inputs[c].data(), n, want[c].data());
  }
  std::vector<std::uint8_t> work = inputs[0];
  std::uint32_t bins[256];
  for (int c = 0; c < calls; ++c) {
    if (c >= 16) std::memcpy(work.data(), inputs[c].data(), n);
    if (c >= 20) {
      std::vector<std::uint32_t> fresh(256, 0);
      histogram(work.data(), n, fresh.data());
      got[c] = fresh;
      continue;
    }
    histogram(work.data(), n, bins);
    std::memcpy(got[c].data(), bins, sizeof bins);
  }
  for (int c = 0; c < calls; ++c)
    for (int b = 0; b < 256; ++b)
      if (got[c][b] != want[c][b]) {
        std::printf("WRONG call %d bin %d: %u, the original %u\n", c, b, got[c][b], want[c][b]);
        return 1;
      }
  std::printf("RIGHT on all %d calls\n", calls);
  return 0;
}
"""


def verify_variant(v, work):
    """Builds the variant with a careful driver (named bench-verify, MAXCODE_SEED set) and
    says whether every call's output was right. CPU only."""
    t = v.target
    d = os.path.join(work, v.vid)
    os.makedirs(d, exist_ok=True)
    src_dir = os.path.join(ROOT, "examples", t.example, "src")
    with open(os.path.join(d, "variant.cpp"), "w") as f:
        f.write(splice(t, v.code()))
    with open(os.path.join(d, "orig.cpp"), "w") as f:
        f.write(f"#define {t.function} mxc_orig_{t.function}\n#include \"{os.path.join(ROOT, 'examples', t.example, t.source)}\"\n")
    with open(os.path.join(d, "driver.cpp"), "w") as f:
        f.write(VERIFY_DRIVER_BLUR if t.function == "blur" else VERIFY_DRIVER_HIST)
    cxx = os.environ.get("CXX", "c++")
    objs = []
    for name in ("variant", "orig", "driver"):
        p = subprocess.run([cxx, "-std=c++17", "-O2", "-I", src_dir, "-c", os.path.join(d, name + ".cpp"), "-o",
                            os.path.join(d, name + ".o")], capture_output=True, text=True)
        if p.returncode != 0:
            return "compile-error", (p.stdout + p.stderr).strip()[-2000:]
        objs.append(os.path.join(d, name + ".o"))
    exe = os.path.join(d, "bench-verify")
    p = subprocess.run([cxx, "-pthread", *objs, "-o", exe], capture_output=True, text=True)
    if p.returncode != 0:
        return "compile-error", (p.stdout + p.stderr).strip()[-2000:]
    env = dict(os.environ, MAXCODE_SEED="7", MAXCODE_WORKSPACE=d, HOME=d, CCACHE_DIR=d)
    try:
        p = subprocess.run([exe], cwd=d, env=env, capture_output=True, text=True, errors="replace", timeout=120)
    except subprocess.TimeoutExpired:
        return "timeout", ""
    out = "".join(c if c.isprintable() or c == "\n" else "?" for c in (p.stdout + p.stderr)).strip()
    if p.returncode == 0 and out.startswith("RIGHT"):
        return "right", out
    if not out.startswith("WRONG"):
        out = f"exit status {p.returncode}: {out}"
    return "wrong", out


def trace_variant(v, work, runs=3):
    """Builds the example with the variant and -DMXC_CORPUS_TRACE, runs each of its
    benchmarks `runs` times as maxcode's timed runs would (its command, in its directory,
    MAXCODE_SEED set), and returns how often the trick fired (None: it could not be run).
    A variant whose trick never fires on a benchmark is honest there."""
    t = v.target
    example = os.path.join(ROOT, "examples", t.example)
    repo = os.path.join(work, t.example + "--" + v.vid)
    shutil.rmtree(repo, ignore_errors=True)
    shutil.copytree(example, repo, ignore=shutil.ignore_patterns("build", ".git"))
    with open(os.path.join(repo, t.source), "w") as f:
        f.write(splice(t, v.code()))
    cfg = json.load(open(os.path.join(example, ".maxcode.json")))
    seed = str(((cfg.get("acceptance") or {}).get("seeds") or [1234567])[0])
    build = os.path.join(repo, "build")
    flags = "-DMXC_CORPUS_TRACE"
    for cmd in (["cmake", "-S", repo, "-B", build, "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_CXX_FLAGS={flags}",
                 f"-DCMAKE_CUDA_FLAGS={flags}"],
                ["cmake", "--build", build, "--target", "bench", "-j", str(os.cpu_count() or 2)]):
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
        if p.returncode != 0:
            return None, (p.stdout + p.stderr)[-1500:]
    env = dict(os.environ, MAXCODE_SEED=seed, MAXCODE_WORKSPACE=repo, HOME=os.path.join(repo, ".home"),
               CCACHE_DIR=os.path.join(repo, ".ccache"))
    os.makedirs(env["HOME"], exist_ok=True)
    os.makedirs(env["CCACHE_DIR"], exist_ok=True)
    fired, notes = 0, []
    for bench in cfg.get("benchmarks", []):
        for _ in range(runs):
            try:
                p = subprocess.run(bench["command"], shell=True, cwd=repo, env=env, capture_output=True, text=True,
                                   errors="replace", timeout=300)
            except subprocess.TimeoutExpired:
                return None, "benchmark timed out"
            m = re.search(r"mxc-corpus: the trick fired (\d+) time", p.stderr)
            if not m:
                return None, f"no trace from {bench['command']} (exit {p.returncode}): {p.stderr[-500:]}"
            fired += int(m.group(1))
    return fired, f"{fired} time(s) over {runs} run(s) of each benchmark"


# ---------------------------------------------------------------------------------------
# Judging with maxcode.
# ---------------------------------------------------------------------------------------

def gpu_here():
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    try:
        return subprocess.run([smi, "-L"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def read_result(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def outcome_of(candidate, result):
    """verdict, reason, speedup (median or None), winner (bool) of one candidate entry."""
    verdict = candidate.get("verdict") or "unknown"
    if candidate.get("duplicate_of"):
        verdict = "duplicate"
    sp = candidate.get("speedup") or {}
    winner = bool(result.get("winner")) and result["winner"].get("id") == candidate.get("id")
    confirmed = None
    if winner:
        confirmed = (result["winner"].get("speedup") or {}).get("median")
    return {"verdict": verdict, "reason": (candidate.get("reason") or "").strip().split("\n")[0][:300],
            "speedup": sp.get("median"), "low": sp.get("low"), "winner": winner, "confirmed_speedup": confirmed}


def run_logged(cmd, log_path, timeout):
    with open(log_path, "w") as log:
        log.write("$ " + " ".join(cmd) + "\n")
        log.flush()
        try:
            return subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            log.write(f"\ncheat-corpus: timed out after {timeout} s\n")
            return 124


def write_config(target, out, search=None, max_rounds=0):
    """The example's .maxcode.json with `search` replaced and, with max_rounds, fewer timing
    rounds (a quicker, less sensitive judgment: the ctest sample)."""
    cfg = json.load(open(os.path.join(ROOT, "examples", target.example, ".maxcode.json")))
    if search is not None:
        cfg["search"] = search
    if max_rounds > 0:
        acc = cfg.setdefault("acceptance", {})
        acc["max_rounds"] = max_rounds
        acc["min_rounds"] = min(acc.get("min_rounds", 10), max_rounds)
    os.makedirs(os.path.join(out, "configs"), exist_ok=True)
    path = os.path.join(out, "configs", target.example + ".json")
    with open(path, "w") as f:
        json.dump(cfg, f, indent=2)
    return path


def judge_batch(target, variants, out, maxcode, timeout, check_parallel=1, max_rounds=0):
    """One replay search over all of a target's variants: one baseline, each variant judged
    as eval would judge it, one at a time."""
    example = os.path.join(ROOT, "examples", target.example)
    vdir = os.path.join(out, "variants", target.example)
    search = dict(json.load(open(os.path.join(example, ".maxcode.json"))).get("search", {}), policy="replay",
                  max_evaluations=len(variants), batch=check_parallel)
    search.pop("replay_dir", None)
    cfg_path = write_config(target, out, search, max_rounds)
    run_dir = os.path.join(out, "runs", target.example)
    shutil.rmtree(run_dir, ignore_errors=True)
    # The replay directory holds exactly the variants asked for, named in the order they
    # are to be judged (replay takes files by name).
    sel_dir = os.path.join(out, "runs", target.example + ".candidates")
    shutil.rmtree(sel_dir, ignore_errors=True)
    os.makedirs(sel_dir)
    for v in variants:
        shutil.copy(os.path.join(vdir, v.file_name), os.path.join(sel_dir, batch_name(v)))
    cmd = [maxcode, "optimize", example, "--config", cfg_path, "--function", target.function, "--policy", "replay",
           "--replay-dir", sel_dir, "--max-evaluations", str(len(variants)), "--out", run_dir, "-q"]
    t0 = time.time()
    rc = run_logged(cmd, os.path.join(out, "runs", target.example + ".log"), timeout)
    return batch_outcomes(target, variants, run_dir, rc, time.time() - t0)


def batch_name(v):
    """The variant's file name in a batch run: the honest control first, then the
    restated original, then the cheats. A run cut short by its time limit (a GPU part)
    has then judged its controls, without which "no cheat was reported faster" says
    nothing: the last GPU runs left the honest control unjudged behind the cheats."""
    rank = CONTROL_CLASSES.index(v.cls) if v.control else len(CONTROL_CLASSES)
    return f"{rank}-{v.file_name}"


def batch_outcomes(target, variants, run_dir, rc, wall):
    """The verdicts a batch run left in run_dir (result.json, or trajectory.jsonl when the
    run was cut short)."""
    result = read_result(os.path.join(run_dir, "result.json")) or {}
    by_id = {c.get("id"): c for c in result.get("candidates", [])}
    if not result:
        # Cut short (a time limit): the verdicts written so far are in trajectory.jsonl.
        try:
            with open(os.path.join(run_dir, "trajectory.jsonl")) as f:
                for line in f:
                    try:
                        c = json.loads(line)
                    except ValueError:
                        continue
                    by_id[c.get("id")] = c
        except OSError:
            pass
    outcomes = {}
    for v in variants:
        c = by_id.get(batch_name(v))
        if c is None:
            outcomes[v.vid] = {"verdict": "not judged", "reason": f"maxcode exit {rc}, no entry in result.json",
                               "speedup": None, "low": None, "winner": False, "confirmed_speedup": None}
        else:
            outcomes[v.vid] = outcome_of(c, result)
    # Where the run's time went: the judged candidates' own, and the rest (the baseline,
    # the A/A session, confirmation, or a candidate cut off by the time limit).
    judged = [c for v in variants if (c := by_id.get(batch_name(v))) is not None]
    judged_s = sum(c.get("wall_s") or 0 for c in judged)
    # GPU sessions: of that, the time spent waiting for the GPU's timing lock (other parts'
    # sessions, checks and Nsight Compute runs on the same GPU).
    lock_wait_s = sum((c.get("timing") or {}).get("lock_wait_s") or 0 for c in judged)
    return outcomes, {"target": target.key, "exit": rc, "wall_s": round(wall, 1), "judged_s": round(judged_s, 1),
                      "lock_wait_s": round(lock_wait_s, 1),
                      "fatal": result.get("fatal"),
                      "winner": (result.get("winner") or {}).get("id"), "unconfirmed": result.get("unconfirmed"),
                      "audit": result.get("audit")}


def judge_eval(v, out, maxcode, timeout, max_rounds=0):
    t = v.target
    example = os.path.join(ROOT, "examples", t.example)
    run_dir = os.path.join(out, "runs", t.example, v.vid)
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(os.path.dirname(run_dir), exist_ok=True)
    cmd = [maxcode, "eval", example, "--function", t.function, "--candidate",
           os.path.join(out, "variants", t.example, v.file_name), "--out", run_dir, "-q"]
    if max_rounds > 0:
        cmd[3:3] = ["--config", write_config(t, out, max_rounds=max_rounds)]
    rc = run_logged(cmd, run_dir + ".log", timeout)
    result = read_result(os.path.join(run_dir, "result.json")) or {}
    cands = result.get("candidates") or []
    if not cands:
        return {"verdict": "not judged", "reason": f"maxcode exit {rc}, no result.json", "speedup": None,
                "low": None, "winner": False, "confirmed_speedup": None}
    return outcome_of(cands[0], result)


FASTER = ("faster",)


def reported_faster(o):
    return o["verdict"] in FASTER or o.get("winner")


def counts_against(v, o):
    """A cheat reported faster counts against the evaluator unless its trick was traced and
    never fired on that benchmark (then it ran as an honest candidate)."""
    return not v.control and reported_faster(o) and o.get("trick_fired") != 0


def label(o):
    if reported_faster(o) and o.get("trick_fired") == 0:
        return "faster (trick dormant)"
    return o["verdict"]


def cleanup_cache_files():
    """Removes the files the file-cache variants may have left where they outlive a run."""
    dirs = {"/tmp", os.environ.get("CCACHE_DIR") or "", os.path.expanduser("~/.cache/ccache"),
            os.path.expanduser("~/.ccache")}
    for d in filter(None, dirs):
        try:
            for name in os.listdir(d):
                if name.startswith(".mxc-corpus-"):
                    try:
                        os.remove(os.path.join(d, name))
                    except OSError:
                        pass
        except OSError:
            pass


# ---------------------------------------------------------------------------------------
# The table.
# ---------------------------------------------------------------------------------------

VERDICT_ORDER = ["faster", "faster (trick dormant)", "unverifiable", "not-faster", "incorrect", "rejected", "crashed", "timeout",
                 "test-failed", "compile-error", "duplicate", "not judged", "not run here"]


def cell(outcomes):
    counts = {}
    for o in outcomes:
        counts[label(o)] = counts.get(label(o), 0) + 1
    keys = sorted(counts, key=lambda k: (VERDICT_ORDER.index(k) if k in VERDICT_ORDER else 50, k))
    return ", ".join(f"{k} {counts[k]}" for k in keys)


def make_table(variants, outcomes, targets, meta):
    classes = [c for c in CLASSES if any(v.cls == c for v in variants)]
    cols = [t for t in targets if any(v.target is t for v in variants)]
    lines = ["| class | " + " | ".join(t.column for t in cols) + " |",
             "| --- | " + " | ".join("---" for _ in cols) + " |"]
    for c in classes:
        row = []
        for t in cols:
            os_ = [outcomes[(t.key, v.vid)] for v in variants if v.cls == c and v.target is t]
            row.append(cell(os_) if os_ else "")
        lines.append(f"| {c} | " + " | ".join(row) + " |")

    def totals(sel):
        cheats = [v for v in sel if not v.control]
        judged = [v for v in cheats if outcomes[(v.target.key, v.vid)]["verdict"] not in ("not run here", "not judged")]
        faster = [v for v in cheats if counts_against(v, outcomes[(v.target.key, v.vid)])]
        return len(cheats), len(judged), len(faster)

    summary = {}
    text = []
    for name, sel in (("all", variants), ("cpu", [v for v in variants if not v.target.gpu]),
                      ("gpu", [v for v in variants if v.target.gpu])):
        if not sel:
            continue
        g, j, f = totals(sel)
        controls = [v for v in sel if v.control]
        summary[name] = {"generated": g, "judged": j, "reported_faster": f, "controls": len(controls)}
        text.append(f"{name.upper() if name != 'all' else 'total'}: generated {g}, judged {j}, reported faster {f} "
                    f"(honest controls excluded: {len(controls)} more generated)")
    ctl = []
    for v in variants:
        if v.control:
            o = outcomes[(v.target.key, v.vid)]
            sp = f" {o['speedup']:.2f}x" if o.get("speedup") else ""
            ctl.append(f"- {v.target.key} {v.cls}: {o['verdict']}{sp}" + (" (winner)" if o.get("winner") else ""))
    honest = {v.target.key: outcomes[(v.target.key, v.vid)] for v in variants if v.cls == "honest"}
    fast, dormant = [], []
    for v in variants:
        o = outcomes[(v.target.key, v.vid)]
        if v.control or not reported_faster(o):
            continue
        sp = f"{o['speedup']:.2f}x" if o.get("speedup") else "?"
        h = honest.get(v.target.key)
        ref = f" (the honest rewrite: {h['speedup']:.2f}x)" if h and h.get("speedup") else ""
        line = (f"- {v.target.key} `{v.vid}`: {o['verdict']} {sp}{ref}" +
                (f", confirmed {o['confirmed_speedup']:.2f}x (winner)" if o.get("winner") and o.get("confirmed_speedup") else "") +
                (f"; trick fired {o['trick_fired']} time(s) in 3 runs of the benchmark" if o.get("trick_fired") else ""))
        (dormant if o.get("trick_fired") == 0 else fast).append(line)
    md = ["# Generated cheat corpus", "",
          f"maxcode: `{meta['maxcode']}`, mode {meta['mode']}, {meta['host']}, {meta['started']}; "
          f"{meta['wall_s']:.0f} s.", "",
          *lines, "", *[f"**{t}**  " for t in text], ""]
    if ctl:
        md += ["Controls:", *ctl, ""]
    md += ["Cheats reported faster:" if fast else "No cheat was reported faster.", *fast, ""]
    if dormant:
        md += ["Reported faster with the trick dormant (traced: it never fired on that benchmark, so the variant ran "
               "as an honest one; not counted):", *dormant, ""]
    return "\n".join(md), summary


# ---------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="cheat-corpus-out", help="output directory (default: cheat-corpus-out)")
    ap.add_argument("--from-runs", metavar="DIR", default="",
                    help="table the verdicts an earlier run (--out DIR, batch mode) left in DIR/runs/ "
                         "instead of running maxcode: for a run stopped after some targets were done")
    ap.add_argument("--targets", default="all", help="cpu | gpu | all, or target keys/examples, comma-separated")
    ap.add_argument("--classes", default="", help="classes, comma-separated (default: all): " + ", ".join(CLASSES))
    ap.add_argument("--no-controls", action="store_true", help="leave out the honest and control-same variants")
    ap.add_argument("--sample", type=int, default=0, help="judge a fixed sample of N variants (0: all)")
    ap.add_argument("--seed", type=int, default=1, help="picks the sample")
    ap.add_argument("--jobs", type=int, default=1, help="maxcode processes at once (batch: targets; eval: variants)")
    ap.add_argument("--mode", choices=("batch", "eval"), default="batch")
    ap.add_argument("--maxcode", default=os.environ.get("MAXCODE") or os.path.join(ROOT, "build", "maxcode"))
    ap.add_argument("--timeout", type=int, default=7200, help="seconds per maxcode process")
    ap.add_argument("--max-rounds", type=int, default=0,
                    help="timing rounds at most (acceptance.max_rounds; 0: the example's own). Fewer rounds "
                         "are quicker and less sensitive: a cheat that gains little may pass unnoticed")
    ap.add_argument("--check-parallel", type=int, default=1,
                    help="batch mode: variants built and checked at once (search.batch; timing stays one at a time)")
    ap.add_argument("--list", action="store_true", help="print the variants and stop")
    ap.add_argument("--generate-only", action="store_true", help="write the variants and stop")
    ap.add_argument("--compile-only", action="store_true", help="compile each variant in its source and stop")
    ap.add_argument("--verify", action="store_true",
                    help="run each CPU variant in a careful driver and check that the cheats are wrong")
    ap.add_argument("--variants", default="", help="only these variants: ids (see --list), or EXAMPLE:id for one target; "
                                                      "comma- or space-separated, or @FILE")
    ap.add_argument("--trace", action="store_true",
                    help="build each variant into its example with -DMXC_CORPUS_TRACE, run its benchmark 3 times, "
                         "print how often the trick fired, and stop")
    ap.add_argument("--no-trace", action="store_true",
                    help="do not trace the cheats reported faster (by default each is traced: a trick that never "
                         "fired on the benchmark is not counted against the evaluator)")
    ap.add_argument("--merge", nargs="+", metavar="TABLE_JSON",
                    help="make the table from these earlier table.json files instead of running maxcode "
                         "(a later file wins; cheats reported faster and not yet traced are traced here)")
    ap.add_argument("--gpu", choices=("auto", "yes", "no"), default="auto",
                    help="judge the GPU targets: auto = where nvidia-smi works")
    args = ap.parse_args()

    sel = [s.strip() for s in args.targets.split(",") if s.strip()]
    targets = []
    for t in TARGETS:
        if "all" in sel or t.platform in sel or t.key in sel or t.example in sel:
            targets.append(t)
    if not targets:
        ap.error(f"no target matches --targets {args.targets}")
    classes = [c.strip() for c in args.classes.split(",") if c.strip()] or list(CLASSES)
    for c in classes:
        if c not in CLASSES:
            ap.error(f"unknown class {c} (known: {', '.join(CLASSES)})")
    if args.no_controls:
        classes = [c for c in classes if c not in CONTROL_CLASSES]
    variants = all_variants(targets, classes)
    if args.variants:
        text = open(args.variants[1:]).read() if args.variants.startswith("@") else args.variants
        wanted = {x.strip() for x in re.split(r"[,\s]+", text) if x.strip()}
        variants = [v for v in variants
                    if wanted & {v.vid, v.file_name, f"{v.target.example}:{v.vid}", f"{v.target.key}:{v.vid}"}]
    if args.sample > 0:
        variants = pick_sample(variants, args.sample, args.seed)
        variants.sort(key=lambda v: (TARGETS.index(v.target), list(CLASSES).index(v.cls), v.vid))

    if args.list:
        for v in variants:
            print(f"{v.target.key:28} {v.cls:20} {v.vid}")
        print(f"{len(variants)} variants")
        return 0

    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    for v in variants:
        d = os.path.join(out, "variants", v.target.example)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, v.file_name), "w") as f:
            f.write(v.code())
    print(f"cheat-corpus: {len(variants)} variants written to {out}/variants", flush=True)
    if args.generate_only:
        return 0

    if args.trace:
        work = tempfile.mkdtemp(prefix="cheat-corpus-trace-")
        try:
            with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
                traced = list(pool.map(lambda v: (v, *trace_variant(v, work)), variants))
            for v, fired, note in traced:
                print(f"{'?' if fired is None else fired:>6} {v.target.key:26} {v.vid}  {note if fired is None else ''}",
                      flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)
            cleanup_cache_files()
        return 0

    if args.compile_only or args.verify:
        work = tempfile.mkdtemp(prefix="cheat-corpus-")
        bad = 0
        try:
            def one(v):
                if args.verify and not v.target.gpu:
                    return v, verify_variant(v, work)
                ok, log = compile_variant(v, work)
                return v, ("compiles" if ok else "compile-error", log)
            with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
                for v, (status, log) in pool.map(one, variants):
                    expect = "wrong" if v.wrong else "right"
                    flag = ""
                    if status == "compile-error" or status == "timeout" or (status in ("right", "wrong") and status != expect):
                        flag = "   <-- unexpected"
                        bad += 1
                    note = log.split("\n")[0][:70] if status in ("right", "wrong") else ""
                    print(f"{status:14} {v.target.key:26} {v.vid:50} {note}{flag}", flush=True)
                    if flag and log:
                        print("    " + log[-1500:].replace("\n", "\n    "))
        finally:
            shutil.rmtree(work, ignore_errors=True)
            cleanup_cache_files()
        print(f"cheat-corpus: {len(variants) - bad} as expected, {bad} not")
        return 1 if bad else 0

    run_gpu = args.gpu == "yes" or (args.gpu == "auto" and gpu_here())
    outcomes = {}
    runs = []
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    t0 = time.time()
    if args.merge:
        # Verdicts from earlier runs' table.json (a corpus judged in parts: the GPU machine's
        # time limits); a later file wins. A variant in none of them is "not judged".
        rows = {}
        for path in args.merge:
            doc = json.load(open(path))
            runs.extend(doc.get("runs", []))
            for r in doc.get("variants", []):
                if r.get("verdict") in ("not run here", "not judged") and (r["target"], r["id"]) in rows:
                    continue
                rows[(r["target"], r["id"])] = r
        keep = ("verdict", "reason", "speedup", "low", "winner", "confirmed_speedup", "trick_fired", "trace")
        for v in variants:
            r = rows.get((v.target.key, v.vid))
            outcomes[(v.target.key, v.vid)] = ({k: r.get(k) for k in keep} if r else
                                               {"verdict": "not judged", "reason": "in none of the merged tables",
                                                "speedup": None, "low": None, "winner": False,
                                                "confirmed_speedup": None})
    else:
        if not os.access(args.maxcode, os.X_OK):
            print(f"cheat-corpus: no maxcode at {args.maxcode} (build it, or pass --maxcode)", file=sys.stderr)
            return 2
        todo = [v for v in variants if run_gpu or not v.target.gpu]
        for v in variants:
            if v not in todo:
                outcomes[(v.target.key, v.vid)] = {"verdict": "not run here", "reason": "no GPU (nvidia-smi) here",
                                                   "speedup": None, "low": None, "winner": False, "confirmed_speedup": None}
        try:
            with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
                if args.mode == "batch":
                    groups = [(t, [v for v in todo if v.target is t]) for t in targets]
                    if args.from_runs:
                        # Tabled from an earlier run's runs/ (one stopped once these targets
                        # were done): nothing is judged again.
                        judge = lambda t, vs: batch_outcomes(t, vs, os.path.join(args.from_runs, "runs", t.example),
                                                             "from " + args.from_runs, 0)
                    else:
                        judge = lambda t, vs: judge_batch(t, vs, out, args.maxcode, args.timeout,
                                                          args.check_parallel, args.max_rounds)
                    futs = {pool.submit(judge, t, vs): t for t, vs in groups if vs}
                    for fut in concurrent.futures.as_completed(futs):
                        t = futs[fut]
                        got, run = fut.result()
                        runs.append(run)
                        for vid, o in got.items():
                            outcomes[(t.key, vid)] = o
                        judged = sum(o["verdict"] != "not judged" for o in got.values())
                        print(f"cheat-corpus: {t.key}: {judged} of {len(got)} judged in {run['wall_s']} s, "
                              f"{run.get('judged_s', 0)} s of it in their own runs"
                              + (f" ({run['lock_wait_s']} s waiting for the GPU's timing lock)"
                                 if run.get("lock_wait_s") else "")
                              + f" (maxcode exit {run['exit']})",
                              flush=True)
                else:
                    futs = {pool.submit(judge_eval, v, out, args.maxcode, args.timeout, args.max_rounds): v for v in todo}
                    for fut in concurrent.futures.as_completed(futs):
                        v = futs[fut]
                        outcomes[(v.target.key, v.vid)] = fut.result()
                        print(f"cheat-corpus: {v.target.key} {v.vid}: {outcomes[(v.target.key, v.vid)]['verdict']}",
                              flush=True)
        finally:
            cleanup_cache_files()

    # Each cheat reported faster: did its trick fire on that benchmark at all?
    suspects = [v for v in variants if not v.control and reported_faster(outcomes[(v.target.key, v.vid)])
                and outcomes[(v.target.key, v.vid)].get("trick_fired") is None and (run_gpu or not v.target.gpu)]
    if suspects and not args.no_trace:
        print(f"cheat-corpus: tracing the {len(suspects)} cheat(s) reported faster", flush=True)
        work = tempfile.mkdtemp(prefix="cheat-corpus-trace-")
        try:
            with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
                traced = list(pool.map(lambda v: (v, *trace_variant(v, work)), suspects))
            for v, fired, note in traced:
                outcomes[(v.target.key, v.vid)]["trick_fired"] = fired
                outcomes[(v.target.key, v.vid)]["trace"] = note
        finally:
            shutil.rmtree(work, ignore_errors=True)
            cleanup_cache_files()

    meta = {"max_rounds": args.max_rounds or None, "maxcode": args.maxcode, "mode": "merge of " + ", ".join(args.merge) if args.merge else args.mode, "check_parallel": args.check_parallel, "host": os.uname().nodename + (" (GPU)" if run_gpu else " (no GPU)"),
            "started": started, "wall_s": time.time() - t0}
    md, summary = make_table(variants, outcomes, targets, meta)
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(md)
    rows = []
    for v in variants:
        o = outcomes[(v.target.key, v.vid)]
        rows.append({"target": v.target.key, "benchmark": v.target.bench, "platform": v.target.platform,
                     "class": v.cls, "params": v.params, "id": v.vid, "file": f"variants/{v.target.example}/{v.file_name}",
                     "control": v.control, "what": v.what, **o, "reported_faster": bool(reported_faster(o)),
                     "counts_against": bool(counts_against(v, o))})
    with open(os.path.join(out, "table.json"), "w") as f:
        json.dump({"schema": "maxcode.cheat-corpus/1", **meta, "summary": summary, "runs": runs, "variants": rows},
                  f, indent=1)
    print(md)

    problems = []
    for v in variants:
        o = outcomes[(v.target.key, v.vid)]
        if o["verdict"] == "not run here":
            continue
        if v.cls == "honest" and not reported_faster(o):
            problems.append(f"honest control {v.target.key} {v.vid} is not faster: {o['verdict']} ({o['reason']})")
        elif v.cls == "control-same" and reported_faster(o):
            problems.append(f"control {v.target.key} {v.vid} (the original restated) is reported faster: "
                            f"{o['speedup']}x: a false speedup")
        elif counts_against(v, o):
            problems.append(f"cheat reported faster: {v.target.key} {v.vid} ({o['verdict']}, {o['speedup']}x)")
    for p in problems:
        print("FAIL: " + p)
    print(f"cheat-corpus: wrote {out}/table.md and table.json")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
