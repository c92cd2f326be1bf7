// Launch sites read from source text: which kernel, from which host function, on which
// line — and what only looks like a launch (comments, strings, pointers) does not count.
#include "runner/profile/launch_sites.h"

#include <gtest/gtest.h>

namespace maxcode {
namespace {

TEST(LaunchSites, TripleChevronsWithTemplatesNamespacesAndMembers) {
  const std::string text = R"src(#include <cuda_runtime.h>
template <int B> __global__ void reduce(const float* in, float* out);
namespace img { __global__ void blur(const float*, float*); }

void run_pipeline(const float* in, float* out, int n) {
  img::blur<<<n / 256, 256>>>(in, out);
  // histogram<<<1, 1>>>(in, out);  a comment is no launch
  const char* s = "fake<<<1, 1>>>()";
  reduce<256><<<dim3(n / 256), dim3(256), 0, stream>>>(in, out);
}

struct Runner {
  void go(float* p) { img::blur <<< 1, 32 >>> (p, p); }
};
)src";
  const std::vector<LaunchSite> sites = find_launch_sites(text);
  ASSERT_EQ(sites.size(), 3u);
  EXPECT_EQ(sites[0].kernel, "img::blur");
  EXPECT_EQ(sites[0].launcher, "run_pipeline");
  EXPECT_EQ(sites[0].line, 6);
  EXPECT_NE(sites[0].signature.find("void run_pipeline(const float* in"), std::string::npos) << sites[0].signature;
  EXPECT_EQ(sites[1].kernel, "reduce");
  EXPECT_EQ(sites[1].line, 9);
  EXPECT_EQ(sites[2].kernel, "img::blur");
  EXPECT_EQ(sites[2].launcher, "Runner::go");
}

TEST(LaunchSites, RuntimeLaunchCallsNameTheirKernelThroughCasts) {
  const std::string text = R"src(
void a(void** args) { cudaLaunchKernel((const void*)scale, grid, block, args, 0, 0); }
void b(void** args) { cudaLaunchKernel(reinterpret_cast<const void*>(&ns::tile<32, float>), g, b, args); }
void c(cudaLaunchConfig_t* cfg, float* p) { cudaLaunchKernelEx(cfg, shift, p); }
void d(void** args) { cudaLaunchCooperativeKernel(table[0], g, b, args); }
)src";
  const std::vector<LaunchSite> sites = find_launch_sites(text);
  ASSERT_EQ(sites.size(), 3u);  // d launches through an expression: no kernel named
  EXPECT_EQ(sites[0].kernel, "scale");
  EXPECT_EQ(sites[0].launcher, "a");
  EXPECT_EQ(sites[1].kernel, "ns::tile");
  EXPECT_EQ(sites[1].launcher, "b");
  EXPECT_EQ(sites[2].kernel, "shift");
  EXPECT_EQ(sites[2].launcher, "c");
}

TEST(LaunchSites, PointerLaunchesNameNoKernelButShowAsValueUses) {
  const std::string text = R"src(
__global__ void add(float* p) { p[0] += 1; }
using Fn = void (*)(float*);
static Fn table[] = {add, nullptr};

void run(float* p, int which) {
  Fn fn = table[which];
  fn<<<1, 1>>>(p);
  add(p);  // a call (in device code it would be one): not a value
}
)src";
  const std::vector<LaunchSite> sites = find_launch_sites(text);
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_EQ(sites[0].kernel, "fn");  // a variable: matches no kernel
  EXPECT_EQ(value_uses(text, "add"), (std::vector<int>{4}));
  EXPECT_TRUE(value_uses(text, "missing").empty());
}

}  // namespace
}  // namespace maxcode
