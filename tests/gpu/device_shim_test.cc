// The call shim's runtime on device buffers, on a real GPU (ctest label `gpu`; skipped
// without one): examples/cuda-plain's benchmark built with the shim around its host
// launcher `blur` (device pointers, two integer parameters: nothing declares a size),
// run with libmaxcode_shim.so loaded. Every one of its 20 calls must have its device
// input sized by its allocation and its device output recorded after the kernel
// finished (equal to the blur computed here), and a perturbation key must change the
// device input between calls (another checksum, other outputs), the same for the same
// key. The evaluator's use of it (the plain cheat suite) is plain_cheat_suite_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "runner/instrument/inject_paths.h"
#include "runner/util/files.h"
#include "runner/util/process.h"
#include "runner/workspace/call_shim.h"
#include "runner/workspace/source_extent.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;
using testing::have_gpu;
using testing::source_path;
using testing::TempDir;

constexpr int kWidth = 4096, kHeight = 2048;  // examples/cuda-plain/bench/bench.cu

float input_at(std::size_t i) { return static_cast<float>((i * 37) % 101) / 7.0f; }

// The blur of the benchmark's unperturbed input at pixel i, as blur_kernel computes it.
float blur_at(std::size_t i) {
  const int x = static_cast<int>(i % kWidth), y = static_cast<int>(i / kWidth);
  const float weight[3][3] = {{1, 2, 1}, {2, 4, 2}, {1, 2, 1}};
  float sum = 0;
  for (int dy = -1; dy <= 1; ++dy) {
    const int yy = std::min(std::max(y + dy, 0), kHeight - 1);
    for (int dx = -1; dx <= 1; ++dx) {
      const int xx = std::min(std::max(x + dx, 0), kWidth - 1);
      sum += weight[dy + 1][dx + 1] * input_at(static_cast<std::size_t>(yy) * kWidth + xx);
    }
  }
  return sum * (1.0f / 16);
}

struct OutLine {
  long call = -1;
  unsigned long long kept = 0, stride = 0, offset = 0;
};

// The `out CALL out float KEPT STRIDE OFFSET` lines of calls.txt.
std::vector<OutLine> out_lines(const std::string& calls) {
  std::vector<OutLine> lines;
  std::istringstream in(calls);
  std::string line;
  while (std::getline(in, line)) {
    OutLine o;
    char name[64] = {0}, type[64] = {0};
    if (std::sscanf(line.c_str(), "out %ld %63s %63s %llu %llu %llu", &o.call, name, type, &o.kept, &o.stride,
                    &o.offset) == 6 &&
        std::string(name) == "out")
      lines.push_back(o);
  }
  return lines;
}

std::vector<float> floats(const std::string& bytes) {
  std::vector<float> v(bytes.size() / sizeof(float));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
  return v;
}

TEST(DeviceShimGpu, RecordsAndPerturbsEveryCallOfAPlainCudaBenchmark) {
  const fs::path example = source_path("examples/cuda-plain");
  ASSERT_TRUE(fs::exists(example / "src/blur.cu")) << example << " not found: set MAXCODE_SOURCE_DIR";
  if (!have_gpu()) GTEST_SKIP() << "no GPU here (nvidia-smi -L fails)";
  const InjectLibraries libs = find_inject_libraries();
  ASSERT_FALSE(libs.shim.empty()) << "libmaxcode_shim.so travels in build/lib (scripts/gpu-bundle.sh)";
  TempDir dir;
  const std::string file = read_text(example / "src/blur.cu");
  const ShimPlan plan = plan_shim(file, find_definition(file, "blur", "blur.cu"), {});
  ASSERT_TRUE(plan.unsupported.empty()) << plan.unsupported;
  write_text(dir / "blur.cu", add_call_shim(file, find_definition(file, "blur", "blur.cu"), plan, {"gpu1"}));
  const std::string nvcc = fs::exists("/usr/local/cuda/bin/nvcc") ? "/usr/local/cuda/bin/nvcc" : "nvcc";
  Command build;
  build.shell = nvcc + " -O2 -std=c++17 -I " + shell_quote((example / "src").string()) + " -o bench " +
                shell_quote((example / "bench/bench.cu").string()) + " blur.cu";
  build.cwd = dir.path().string();
  build.timeout_s = 600;
  Outcome built = run(build);
  ASSERT_TRUE(built.ok()) << built.err;

  auto run_bench = [&](const std::string& config, const fs::path& records) {
    fs::remove_all(records);
    fs::create_directories(records);
    write_text(records / "config", config);
    Command c;
    c.shell = "./bench";
    c.cwd = dir.path().string();
    if (!config.empty())
      c.env = {{"MAXCODE_SHIM_DIR", records.string()}, {"LD_PRELOAD", libs.shim.string()}};
    c.timeout_s = 300;
    return run(c);
  };
  const Outcome plain = run_bench("", dir / "none");
  ASSERT_TRUE(plain.ok()) << plain.err;

  // Observed (key 0): the program's output unchanged; 20 calls, each with its device
  // input sized by its allocation and its output recorded, equal to the blur.
  const fs::path observed = dir / "observed";
  const Outcome o = run_bench("key 0\ncap 1048576\n", observed);
  ASSERT_TRUE(o.ok()) << o.err;
  EXPECT_EQ(o.out, plain.out) << "key 0 leaves the device input alone";
  const std::string calls = read_text(observed / "calls.txt");
  EXPECT_NE(calls.find("call 19 "), std::string::npos) << calls.substr(0, 2000);
  EXPECT_NE(calls.find("arg 0 in in "), std::string::npos) << calls.substr(0, 2000);
  EXPECT_NE(calls.find(" " + std::to_string(kWidth * kHeight) + " "), std::string::npos)
      << "the device buffers are sized by their allocation: " << calls.substr(0, 2000);
  const std::vector<OutLine> lines = out_lines(calls);
  ASSERT_EQ(lines.size(), 20u) << "every call's device output is recorded: " << calls.substr(0, 2000);
  for (const OutLine& line : lines) {
    const std::vector<float> got = floats(read_text(observed / ("out-" + std::to_string(line.call) + "-out.bin")));
    ASSERT_EQ(got.size(), line.kept);
    for (std::size_t k = 0; k < got.size(); k += 97) {
      const std::size_t at = line.offset + k * line.stride;
      const float want = blur_at(at);
      ASSERT_NEAR(got[k], want, 1e-5f * std::max(1.0f, std::fabs(want)))
          << "call " << line.call << ", pixel " << at << ": read before the kernel finished?";
    }
  }

  // Perturbed: the device input changes before every call (another checksum, other
  // outputs after the first call), the same way for the same key.
  const fs::path perturbed = dir / "perturbed";
  const Outcome p = run_bench("key 12345\ncap 1048576\n", perturbed);
  ASSERT_TRUE(p.ok()) << p.err;
  EXPECT_NE(p.out, plain.out) << "the device input was perturbed";
  const Outcome again = run_bench("key 12345\ncap 1048576\n", dir / "again");
  ASSERT_TRUE(again.ok()) << again.err;
  EXPECT_EQ(again.out, p.out) << "one key, one perturbation";
  EXPECT_NE(read_text(perturbed / "out-19-out.bin"), read_text(observed / "out-19-out.bin"));
  EXPECT_EQ(read_text(perturbed / "out-19-out.bin"), read_text(dir / "again" / "out-19-out.bin"));
  std::printf("device shim: %s", p.out.c_str());
}

}  // namespace
}  // namespace maxcode
