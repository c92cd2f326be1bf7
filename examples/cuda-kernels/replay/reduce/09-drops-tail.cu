// Fast but WRONG: float4 loads after an aligned head, but the up to three elements
// after the last whole float4 are forgotten. The benchmark's 2^26 elements (from an
// aligned pointer) have no tail and look right; the tests' n = 33 or 4097 do not.
__device__ double reduce_warp_sum_notail(double v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

__global__ void reduce_notail_kernel(const float* __restrict__ in, int n, double* __restrict__ out) {
  int head = static_cast<int>(((16 - (reinterpret_cast<size_t>(in) & 15)) & 15) / 4);
  if (head > n) head = n;
  const long long n4 = (n - head) / 4;
  const float4* v = reinterpret_cast<const float4*>(in + head);
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long tid = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  double acc = 0.0;
  for (long long i = tid; i < n4; i += stride) {
    const float4 a = __ldg(&v[i]);
    acc += static_cast<double>(a.x);
    acc += static_cast<double>(a.y);
    acc += static_cast<double>(a.z);
    acc += static_cast<double>(a.w);
  }
  if (tid < head) acc += static_cast<double>(in[tid]);
  // BUG: in[head + 4 * n4 .. n) is never added.

  __shared__ double warp_sums[32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  acc = reduce_warp_sum_notail(acc);
  if (lane == 0) warp_sums[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = lane < static_cast<int>(blockDim.x / 32) ? warp_sums[lane] : 0.0;
    acc = reduce_warp_sum_notail(acc);
    if (lane == 0) atomicAdd(out, acc);
  }
}

void reduce_sum(const float* in, int n, double* out, cudaStream_t stream) {
  cudaMemsetAsync(out, 0, sizeof(double), stream);
  if (n <= 0) return;
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (sms <= 0) sms = 1;
  const int threads = 256;
  const long long wanted = (static_cast<long long>(n) / 4 + threads - 1) / threads;
  const int blocks = static_cast<int>(wanted < 1 ? 1 : wanted < 4LL * sms ? wanted : 4LL * sms);
  reduce_notail_kernel<<<blocks, threads, 0, stream>>>(in, n, out);
}
