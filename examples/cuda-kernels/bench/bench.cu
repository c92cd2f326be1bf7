// Benchmark harness: ./build/bench transpose|reduce|stencil [iterations]
//
// Runs one function of src/kernels.h `iterations` times (default 20) on inputs derived
// from MAXCODE_SEED (default 42) and prints checksums of every call's output and of
// the input as it is at the end. It prints nothing about time: maxcode times the
// kernels itself (CUPTI), so this program launches no kernel of its own -- only copies
// and memsets -- and every kernel in the process belongs to the function under test.
//
// Each iteration, before the call:
//   1. one row (transpose, stencil) or one 64K chunk (reduce) of the input is replaced
//      with new values, so a result cached by pointer or by call count goes wrong;
//   2. the whole output is filled with 0xFF bytes (a NaN in float and double), so an
//      output that is not written, or only partly, shows up as nan;
//   3. a scratch buffer twice the size of the L2 cache is overwritten, so each call
//      starts with its input and output out of L2 (see the README's roofline bytes).
// Then the call, on a stream of this program's own, a synchronization, and the
// output is copied back and checksummed.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "kernels.h"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "bench: %s: %s (%s)\n", what, cudaGetErrorString(e), cudaGetErrorName(e));
    std::exit(1);
  }
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// 24 random bits -> a multiple of 2^-23 in [-1, 1), exact in float.
float to_unit(std::uint64_t bits24) { return static_cast<float>(static_cast<double>(bits24) * (1.0 / 8388608.0) - 1.0); }

// Element i of the value stream `key` is v[i - start]; two values per hash. `start` is
// even.
void fill(float* v, std::size_t n, std::uint64_t key, std::size_t start) {
  const std::uint64_t base = splitmix64(key) + start;
  std::size_t i = 0;
  for (; i + 1 < n; i += 2) {
    const std::uint64_t h = splitmix64(base + i);
    v[i] = to_unit(h >> 40);
    v[i + 1] = to_unit((h >> 8) & 0xFFFFFF);
  }
  if (i < n) v[i] = to_unit(splitmix64(base + i) >> 40);
}

// Sum, sum of |v| and a sum weighted by a pseudo-random function of the position
// (weights 1..1024), over a buffer that arrives in pieces. Eight lanes, so the host
// loop is not one long chain of dependent adds.
struct Checksums {
  double sum[8] = {}, abs_sum[8] = {}, weighted[8] = {};

  static double weight(std::size_t i) { return static_cast<double>((static_cast<std::uint32_t>(i) * 0x9E3779B1u) >> 22) + 1.0; }

  // v[0..n) are elements start..start+n of the whole buffer; `start` is a multiple of 8.
  void add(const float* v, std::size_t n, std::size_t start) {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8)
      for (int k = 0; k < 8; ++k) {
        const double x = v[i + k];
        sum[k] += x;
        abs_sum[k] += std::fabs(x);
        weighted[k] += x * weight(start + i + k);
      }
    for (; i < n; ++i) {
      const double x = v[i];
      sum[i & 7] += x;
      abs_sum[i & 7] += std::fabs(x);
      weighted[i & 7] += x * weight(start + i);
    }
  }
  static double total(const double* lanes) {
    return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  }
};

// An exact digest of the bits (of the input: any change at all shows).
struct BitDigest {
  std::uint64_t lanes[4] = {1, 2, 3, 4};
  void add(const float* v, std::size_t n, std::size_t start) {
    for (std::size_t i = 0; i < n; ++i) {
      std::uint32_t bits;
      std::memcpy(&bits, &v[i], sizeof bits);
      std::uint64_t& h = lanes[(start + i) & 3];
      h = (h ^ bits) * 0x100000001B3ull;
    }
  }
  std::uint64_t value() const {
    return splitmix64(lanes[0]) ^ splitmix64(lanes[1] + 1) ^ splitmix64(lanes[2] + 2) ^ splitmix64(lanes[3] + 3);
  }
};

int usage() {
  std::fprintf(stderr, "usage: bench transpose|reduce|stencil [iterations]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) return usage();
  const std::string which = argv[1];
  if (which != "transpose" && which != "reduce" && which != "stencil") return usage();
  int iterations = 20;
  if (argc == 3) {
    char* end = nullptr;
    const long v = std::strtol(argv[2], &end, 10);
    if (!end || *end != '\0' || v < 1 || v > 100000) return usage();
    iterations = static_cast<int>(v);
  }
  std::uint64_t seed = 42;
  if (const char* text = std::getenv("MAXCODE_SEED"); text && *text) seed = std::strtoull(text, nullptr, 10);
  const std::uint64_t key = splitmix64(seed ^ 0x6B65726E656C73ull);  // "kernels"

  const bool is_reduce = which == "reduce";
  const int rows = is_reduce ? 1 : 4096, cols = is_reduce ? (1 << 26) : 4096;
  const std::size_t n_in = static_cast<std::size_t>(rows) * cols;
  const std::size_t n_out = is_reduce ? 1 : n_in;  // floats, or one double
  const std::size_t out_bytes = is_reduce ? sizeof(double) : n_out * sizeof(float);
  const std::size_t update = is_reduce ? (1u << 16) : static_cast<std::size_t>(cols);  // replaced per iteration
  const std::size_t piece = 1u << 20;  // host <-> device transfers go through a 4 MiB buffer

  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  int l2_bytes = 0;
  check(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device), "cudaDeviceGetAttribute(L2)");
  const std::size_t scratch_bytes = 2 * static_cast<std::size_t>(l2_bytes > (8 << 20) ? l2_bytes : (8 << 20));

  float* d_in = nullptr;
  void* d_out = nullptr;
  void* d_scratch = nullptr;
  float* staging = nullptr;
  check(cudaMalloc(&d_in, n_in * sizeof(float)), "cudaMalloc(input)");
  check(cudaMalloc(&d_out, out_bytes), "cudaMalloc(output)");
  check(cudaMalloc(&d_scratch, scratch_bytes), "cudaMalloc(scratch)");
  check(cudaMallocHost(&staging, piece * sizeof(float)), "cudaMallocHost");
  cudaStream_t stream;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  for (std::size_t at = 0; at < n_in; at += piece) {
    const std::size_t len = std::min(piece, n_in - at);
    fill(staging, len, key, at);
    check(cudaMemcpy(d_in + at, staging, len * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy(input)");
  }

  std::vector<std::string> lines;
  char line[512];
  for (int it = 0; it < iterations; ++it) {
    // 1. Replace one row / chunk of the input with new values.
    const std::uint64_t h = splitmix64(key + 0x1000 + static_cast<std::uint64_t>(it));
    const std::size_t offset = (h % (n_in / update)) * update;
    fill(staging, update, key ^ (0xC0FFEEull + static_cast<std::uint64_t>(it) * 0x10001ull), 0);
    check(cudaMemcpyAsync(d_in + offset, staging, update * sizeof(float), cudaMemcpyHostToDevice, stream),
          "cudaMemcpyAsync(input update)");
    // 2. Poison the output; 3. push input and output out of L2.
    check(cudaMemsetAsync(d_out, 0xFF, out_bytes, stream), "cudaMemsetAsync(poison output)");
    check(cudaMemsetAsync(d_scratch, (it & 1) ? 0x5A : 0xA5, scratch_bytes, stream), "cudaMemsetAsync(flush L2)");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize(before the call)");

    // The call under test.
    if (which == "transpose")
      transpose(d_in, static_cast<float*>(d_out), rows, cols, stream);
    else if (which == "stencil")
      stencil5(d_in, static_cast<float*>(d_out), rows, cols, stream);
    else
      reduce_sum(d_in, cols, static_cast<double*>(d_out), stream);
    check(cudaGetLastError(), "launch (cudaGetLastError after the call)");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize(after the call)");

    if (is_reduce) {
      double result = 0;
      check(cudaMemcpy(&result, d_out, sizeof(double), cudaMemcpyDeviceToHost), "cudaMemcpy(output)");
      std::snprintf(line, sizeof line, "iter %d sum %.17g\n", it, result);
    } else {
      std::size_t at_sample[4];
      float sample[4] = {};
      at_sample[0] = n_out - 1;  // the last element: a partial last tile shows here
      for (int k = 1; k < 4; ++k) at_sample[k] = splitmix64(h + static_cast<std::uint64_t>(k)) % n_out;
      Checksums c;
      const float* out = static_cast<const float*>(d_out);
      for (std::size_t at = 0; at < n_out; at += piece) {
        const std::size_t len = std::min(piece, n_out - at);
        check(cudaMemcpy(staging, out + at, len * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy(output)");
        c.add(staging, len, at);
        for (int k = 0; k < 4; ++k)
          if (at_sample[k] >= at && at_sample[k] < at + len) sample[k] = staging[at_sample[k] - at];
      }
      std::snprintf(line, sizeof line, "iter %d sum %.9g abs %.9g weighted %.9g samples %.9g %.9g %.9g %.9g\n", it,
                    Checksums::total(c.sum), Checksums::total(c.abs_sum), Checksums::total(c.weighted), sample[0],
                    sample[1], sample[2], sample[3]);
    }
    lines.push_back(line);
  }
  check(cudaGetLastError(), "cudaGetLastError");

  // The input as the function left it: a function that writes to its input changes this.
  Checksums in;
  BitDigest digest;
  for (std::size_t at = 0; at < n_in; at += piece) {
    const std::size_t len = std::min(piece, n_in - at);
    check(cudaMemcpy(staging, d_in + at, len * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy(input back)");
    in.add(staging, len, at);
    digest.add(staging, len, at);
  }
  for (const std::string& l : lines) std::fputs(l.c_str(), stdout);
  std::printf("input digest %.17g %.17g 0x%016llx\n", Checksums::total(in.sum), Checksums::total(in.abs_sum),
              static_cast<unsigned long long>(digest.value()));

  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  check(cudaFreeHost(staging), "cudaFreeHost");
  check(cudaFree(d_scratch), "cudaFree");
  check(cudaFree(d_out), "cudaFree");
  check(cudaFree(d_in), "cudaFree");
  return 0;
}
