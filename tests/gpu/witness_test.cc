// The out-of-process witness on a real GPU (ctest label `gpu`; skipped without one): a
// program whose child process launches kernels of its own runs once under the CUPTI
// injection (as timed runs do) and once under ncu_duration_argv (as the witness does).
// With the child inheriting the injection, CUPTI and ncu agree on launches and time;
// with the child started without it (issue 17: the work in a child process, a decoy in
// the parent), CUPTI sees only the parent's launches, ncu still follows the child, and
// the witness rejects. Prints the figures of both.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "runner/evaluate/gpu/cuda_tools.h"
#include "runner/evaluate/gpu/witness.h"
#include "runner/instrument/inject_paths.h"
#include "runner/util/files.h"
#include "runner/util/process.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;
using testing::have_gpu;
using testing::TempDir;

const char* kProgram = R"(#include <cstdlib>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>
__global__ void decoy(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1; }
__global__ void work(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int k = 0; k < 512; ++k) v = v * 0.999f + 1.0f;
  x[i] = v;
}
int main(int argc, char** argv) {
  const int n = 1 << 22;
  float* x;
  if (cudaMalloc(&x, n * sizeof(float)) != cudaSuccess) return 2;
  cudaMemset(x, 0, n * sizeof(float));
  if (argc > 1 && !strcmp(argv[1], "child")) {
    for (int i = 0; i < 5; ++i) work<<<n / 256, 256>>>(x, n);
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 3;
  }
  for (int i = 0; i < 5; ++i) decoy<<<n / 256, 256>>>(x, n);
  if (cudaDeviceSynchronize() != cudaSuccess) return 3;
  if (argc > 1 && !strcmp(argv[1], "hide")) {
    unsetenv("CUDA_INJECTION64_PATH");
    unsetenv("MAXCODE_PROFILE_DIR");
  }
  pid_t child = fork();
  if (child == 0) {
    execl(argv[0], argv[0], "child", (char*)nullptr);
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 4;
}
)";

struct Figures {
  KernelWork cupti, ncu;
  WitnessSide side;  // every launch counted (no warm-up), ncu's launches matched to CUPTI's
};

Figures measure(const TempDir& dir, const fs::path& program, const std::string& mode, const std::string& ncu,
                const fs::path& cupti_library) {
  Figures f;
  const fs::path profile = dir / ("profile-" + mode);
  fs::create_directories(profile);
  Command timed;
  timed.shell = shell_quote(program.string()) + " " + mode;
  timed.env = {{"CUDA_INJECTION64_PATH", cupti_library.string()}, {"MAXCODE_PROFILE_DIR", profile.string()}};
  timed.timeout_s = 120;
  Outcome o = run(timed);
  EXPECT_EQ(o.exit_code, 0) << o.tail(2000);
  const RunKernels records = read_run_kernels(profile);
  f.cupti = cupti_work(records);

  const fs::path log = dir / ("ncu-" + mode + ".csv");
  Command witnessed;
  witnessed.shell = shell_command(ncu_duration_argv(ncu, log.string(), shell_quote(program.string()) + " " + mode));
  witnessed.timeout_s = 300;
  o = run(witnessed);
  EXPECT_EQ(o.exit_code, 0) << o.tail(2000);
  const std::vector<NcuKernel> kernels = parse_ncu_csv(read_text(log));
  f.ncu = ncu_work(kernels);
  f.side = witness_side(kernels, records, KernelSelection({}, {}, 0));
  std::printf("%-6s CUPTI %llu launches, %.3f ms; ncu %llu launches, %.3f ms\n", mode.c_str(),
              static_cast<unsigned long long>(f.cupti.launches), f.cupti.ns * 1e-6,
              static_cast<unsigned long long>(f.ncu.launches), f.ncu.ns * 1e-6);
  return f;
}

TEST(WitnessOnGpu, SeesTheChildProcessThatCuptiMissed) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU here (nvidia-smi -L fails)";
  const std::string nvcc = find_cuda_tool("nvcc"), ncu = find_cuda_tool("ncu");
  ASSERT_FALSE(nvcc.empty()) << "nvcc not found";
  ASSERT_FALSE(ncu.empty()) << "ncu not found";
  const InjectLibraries libs = find_inject_libraries();
  ASSERT_FALSE(libs.cupti.empty()) << "libmaxcode_cupti.so not found (MAXCODE_INJECT_DIR, or lib/ beside the tests)";
  TempDir dir;
  testing::write_file(dir / "child.cu", kProgram);
  Command build;
  build.shell = shell_quote(nvcc) + " -O2 -arch=native -o " + shell_quote((dir / "child").string()) + " " +
                shell_quote((dir / "child.cu").string());
  build.timeout_s = 300;
  Outcome built = run(build);
  ASSERT_EQ(built.exit_code, 0) << built.tail(4000);

  const double tolerance = 0.25;
  // Honest: the child inherits the injection, so both see 10 launches.
  const Figures honest = measure(dir, dir / "child", "plain", ncu, libs.cupti);
  EXPECT_EQ(honest.cupti.launches, 10u);
  EXPECT_EQ(honest.ncu.launches, 10u);
  const WitnessSide original = honest.side;
  EXPECT_EQ(original.ncu_launches, honest.ncu.launches);
  EXPECT_EQ(original.cupti_launches, honest.cupti.launches);
  // ncu's names ("work(float *, int)") matched to the demangler's ("work(float*, int)"),
  // launch for launch.
  EXPECT_TRUE(original.per_launch);
  EXPECT_DOUBLE_EQ(original.ncu_counted_ns, original.ncu_ns);
  EXPECT_EQ(check_original_witness(original, tolerance), "");
  std::printf("honest: ncu / CUPTI = %.3f\n", original.agreement());

  // The trick: CUPTI records the parent's decoys only.
  const Figures hidden = measure(dir, dir / "child", "hide", ncu, libs.cupti);
  EXPECT_EQ(hidden.cupti.launches, 5u);
  EXPECT_EQ(hidden.ncu.launches, 10u);
  const WitnessSide candidate = hidden.side;
  EXPECT_FALSE(candidate.per_launch);  // ncu's kernels are not CUPTI's
  const double claimed = honest.cupti.ns / hidden.cupti.ns;
  const WitnessRecord r = judge_witness(original, candidate, claimed, tolerance);
  std::printf("hidden: claimed %.2fx; %s\n", claimed, r.note.c_str());
  EXPECT_EQ(r.status, WitnessStatus::kRejected);
  EXPECT_NE(r.note.find("the timer did not see the work"), std::string::npos) << r.note;
}

}  // namespace
}  // namespace maxcode
