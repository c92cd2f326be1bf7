// Kernels mapped to the host functions that launch them, over a repository's files:
// one launcher, several, one in another file, a pointer, none.
#include "runner/profile/launchers.h"

#include <gtest/gtest.h>

#include "runner/util/files.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

ProfileEntry kernel(const std::string& function, const std::string& file) {
  ProfileEntry e;
  e.kind = "gpu";
  e.name = function + "(float*)";
  e.function = function;
  e.file = file;
  e.in_scope = true;
  return e;
}

TEST(Launchers, EachKernelGetsItsLaunchersOrANoteSayingWhyNot) {
  testing::TempDir repo;
  write_text(repo / "src/k.cu", R"(
__global__ void hot(float* p) { p[0] = 1; }
__global__ void twice(float* p) { p[0] = 2; }
__global__ void by_pointer(float* p) { p[0] = 3; }
__global__ void elsewhere(float* p) { p[0] = 4; }
__global__ void never(float* p) { p[0] = 5; }

void run_hot(float* p) { hot<<<1, 1>>>(p); hot<<<2, 1>>>(p); }
void first(float* p) { twice<<<1, 1>>>(p); }
void second(float* p) { twice<<<1, 1>>>(p); }
void run_table(float* p) { void (*fn)(float*) = by_pointer; fn<<<1, 1>>>(p); }
)");
  write_text(repo / "src/main.cu", "void drive(float* p) { elsewhere<<<1, 1>>>(p); }\n");
  write_text(repo / "build/copy.cu", "void stale(float* p) { hot<<<1, 1>>>(p); }\n");  // build trees are skipped
  std::vector<ProfileEntry> kernels = {kernel("hot", "src/k.cu"), kernel("twice", "src/k.cu"),
                                       kernel("by_pointer", "src/k.cu"), kernel("elsewhere", "src/k.cu"),
                                       kernel("never", "src/k.cu"), kernel("cublas_gemm", "")};
  kernels.back().external = true;
  SourceIndex sources(repo.path());
  find_launchers(kernels, sources);

  ASSERT_EQ(kernels[0].launchers.size(), 1u);  // two launches, one launcher
  EXPECT_EQ(kernels[0].launchers[0].function, "run_hot");
  EXPECT_EQ(kernels[0].launchers[0].file, "src/k.cu");
  EXPECT_EQ(kernels[0].launchers[0].line, 8);
  ASSERT_EQ(kernels[1].launchers.size(), 2u);
  EXPECT_EQ(kernels[1].launchers[0].function, "first");
  EXPECT_EQ(kernels[1].launchers[1].function, "second");
  EXPECT_TRUE(kernels[2].launchers.empty());
  EXPECT_EQ(kernels[2].launch_note,
            "launched only through a pointer: its name is used as a value at src/k.cu:11, never launched by name");
  ASSERT_EQ(kernels[3].launchers.size(), 1u);
  EXPECT_EQ(kernels[3].launchers[0].file, "src/main.cu");
  EXPECT_TRUE(kernels[4].launchers.empty());
  EXPECT_NE(kernels[4].launch_note.find("no launch of it found"), std::string::npos);
  EXPECT_TRUE(kernels[5].launchers.empty());  // a library's kernel: not looked for
  EXPECT_TRUE(kernels[5].launch_note.empty());
}

}  // namespace
}  // namespace maxcode
