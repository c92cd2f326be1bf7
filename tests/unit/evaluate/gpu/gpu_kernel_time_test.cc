// The "kernels" timing metric from CUPTI activity files: which kernels count, the
// warm-up launches left out, and the checks that reject work hidden from the metric.
#include <gtest/gtest.h>

#include "runner/evaluate/gpu/kernel_time.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

using testing::TempDir;

KernelLaunch launch(const std::string& name, std::uint64_t start, std::uint64_t ns, std::uint32_t stream = 7) {
  KernelLaunch k;
  k.name = name;
  k.stream = stream;
  k.start_ns = start;
  k.end_ns = start + ns;
  return k;
}

// One process's file, as the injection writes it.
void write_process(const std::filesystem::path& dir, const std::string& file, const GpuActivity& activity) {
  testing::write_file(dir / file, to_json(activity.summary(1, "bench", true)).dump());
}

constexpr const char* kTranspose = "_Z15transpose_naivePKfPfii";  // transpose_naive(float const*, float*, int, int)
constexpr const char* kHelper = "_Z6helperPf";                      // helper(float*)

TEST(KernelTime, SumsEveryStreamAndLeavesOutTheFirstLaunch) {
  TempDir dir;
  GpuActivity a;
  a.add_kernel(launch(kTranspose, 1000, 900));  // warm-up: slower
  a.add_kernel(launch(kTranspose, 3000, 500));
  a.add_kernel(launch(kTranspose, 5000, 500, /*stream=*/13));  // another stream counts too
  write_process(dir.path(), "gpu-1-1.json", a);
  RunKernels run = read_run_kernels(dir.path());
  ASSERT_EQ(run.processes(), 1);
  KernelSelection all({}, {}, 1);
  EXPECT_NEAR(all.seconds(run), 1000e-9, 1e-15);
  EXPECT_EQ(all.counted_launches(run), 2u);
  KernelSelection none_left_out({}, {}, 0);
  EXPECT_NEAR(none_left_out.seconds(run), 1900e-9, 1e-15);
  EXPECT_EQ(run.kernels.at(kTranspose).streams.size(), 2u);
}

TEST(KernelTime, EarliestLaunchIsTheWarmUpEvenWhenRecordsArriveOutOfOrder) {
  TempDir dir;
  GpuActivity a;
  a.add_kernel(launch(kTranspose, 5000, 500));
  a.add_kernel(launch(kTranspose, 1000, 900));
  write_process(dir.path(), "gpu-1-1.json", a);
  EXPECT_NEAR(KernelSelection({}, {}, 1).seconds(read_run_kernels(dir.path())), 500e-9, 1e-15);
}

TEST(KernelTime, ProcessesOfOneRunAddUp) {
  TempDir dir;
  GpuActivity a, b;
  a.add_kernel(launch(kTranspose, 0, 100));
  b.add_kernel(launch(kTranspose, 0, 300));
  write_process(dir.path(), "gpu-1-1.json", a);
  write_process(dir.path(), "gpu-2-1.json", b);
  RunKernels run = read_run_kernels(dir.path());
  EXPECT_EQ(run.processes(), 2);
  EXPECT_EQ(run.kernels.at(kTranspose).launches, 2u);
}

TEST(KernelTime, PatternsSelectByDemangledNameButNewKernelsAlwaysCount) {
  TempDir dir;
  GpuActivity a;
  a.add_kernel(launch(kTranspose, 0, 100));
  a.add_kernel(launch(kHelper, 200, 1000));
  write_process(dir.path(), "gpu-1-1.json", a);
  RunKernels run = read_run_kernels(dir.path());
  KernelSelection only_transpose({"^transpose"}, {kTranspose, kHelper}, 0);
  EXPECT_NEAR(only_transpose.seconds(run), 100e-9, 1e-15);
  // A candidate that moves its work into a kernel the original never had.
  KernelSelection helper_is_new({"^transpose"}, {kTranspose}, 0);
  EXPECT_NEAR(helper_is_new.seconds(run), 1100e-9, 1e-15);
}

TEST(KernelTime, HostCopiesBeyondTheOriginalsAreRejected) {
  TempDir original_dir, candidate_dir;
  GpuActivity original, candidate;
  original.add_kernel(launch(kTranspose, 0, 100));
  original.add_transfer("HtoD", 64 << 20, 0, 10);
  candidate.add_kernel(launch(kTranspose, 0, 1));
  candidate.add_transfer("HtoD", 64 << 20, 0, 10);
  candidate.add_transfer("DtoH", 64 << 20, 0, 10);  // the input fetched to compute on the host
  write_process(original_dir.path(), "gpu-1-1.json", original);
  write_process(candidate_dir.path(), "gpu-1-1.json", candidate);
  KernelSelection all({}, {kTranspose}, 0);
  std::string why = check_against_baseline(read_run_kernels(original_dir.path()),
                                            read_run_kernels(candidate_dir.path()), all);
  EXPECT_NE(why.find("DtoH"), std::string::npos) << why;
  EXPECT_NE(why.find("not kernel time"), std::string::npos) << why;
}

TEST(KernelTime, NoCountedKernelIsRejected) {
  TempDir original_dir, candidate_dir;
  GpuActivity original, candidate;
  original.add_kernel(launch(kTranspose, 0, 100));
  write_process(original_dir.path(), "gpu-1-1.json", original);
  write_process(candidate_dir.path(), "gpu-1-1.json", candidate);
  std::string why = check_against_baseline(read_run_kernels(original_dir.path()),
                                           read_run_kernels(candidate_dir.path()), KernelSelection({}, {kTranspose}, 1));
  EXPECT_NE(why.find("no counted kernel ran"), std::string::npos) << why;
}

TEST(KernelTime, AnUncountedKernelLaunchedMoreOftenIsRejected) {
  TempDir original_dir, candidate_dir;
  GpuActivity original, candidate;
  original.add_kernel(launch(kTranspose, 0, 100));
  original.add_kernel(launch(kHelper, 0, 10));
  candidate.add_kernel(launch(kTranspose, 0, 50));
  candidate.add_kernel(launch(kHelper, 0, 10));
  candidate.add_kernel(launch(kHelper, 100, 500));  // work under the harness kernel's name
  write_process(original_dir.path(), "gpu-1-1.json", original);
  write_process(candidate_dir.path(), "gpu-1-1.json", candidate);
  KernelSelection selection({"transpose"}, {kTranspose, kHelper}, 0);
  std::string why = check_against_baseline(read_run_kernels(original_dir.path()),
                                           read_run_kernels(candidate_dir.path()), selection);
  EXPECT_NE(why.find("helper(float*)"), std::string::npos) << why;
  EXPECT_NE(why.find("ran 2 times"), std::string::npos) << why;
}

TEST(KernelTime, TheSameWorkPasses) {
  TempDir original_dir, candidate_dir;
  GpuActivity original, candidate;
  original.add_kernel(launch(kTranspose, 0, 100));
  original.add_transfer("memset", 1 << 20, 0, 10);
  candidate.add_kernel(launch(kTranspose, 0, 50));
  candidate.add_transfer("memset", (1 << 20) + 8, 0, 10);  // a small accumulator reset is fine
  write_process(original_dir.path(), "gpu-1-1.json", original);
  write_process(candidate_dir.path(), "gpu-1-1.json", candidate);
  EXPECT_EQ(check_against_baseline(read_run_kernels(original_dir.path()), read_run_kernels(candidate_dir.path()),
                                   KernelSelection({}, {kTranspose}, 0)),
            "");
}

// Each call's work under a new kernel name (a new template instance per call), so that
// every launch would be "the first launch of that kernel": warm-up is the original's
// budget (one launch here), spent in launch order, and the rest is timed.
TEST(KernelTime, NewNamesPerCallDoNotBuyMoreWarmUp) {
  TempDir original_dir, candidate_dir;
  GpuActivity original, candidate;
  for (int i = 0; i < 10; ++i) original.add_kernel(launch(kTranspose, 1000u * i, i == 0 ? 900 : 500));
  for (int i = 0; i < 10; ++i) {
    candidate.add_kernel(launch("_Z4workILi" + std::to_string(i) + "EEvPf", 1000u * i, 500));
    candidate.add_kernel(launch("_Z5decoyPf", 1000u * i + 600, 5));
  }
  write_process(original_dir.path(), "gpu-1-1.json", original);
  write_process(candidate_dir.path(), "gpu-1-1.json", candidate);
  const RunKernels o = read_run_kernels(original_dir.path()), c = read_run_kernels(candidate_dir.path());
  const KernelSelection selection({}, {kTranspose}, 1);
  EXPECT_NEAR(selection.seconds(o), 4500e-9, 1e-15);
  // Only the earliest launch (work<0>) is warm-up: 9 x 500 + 10 x 5 ns are timed.
  EXPECT_NEAR(selection.seconds(c), 4550e-9, 1e-15);
  EXPECT_EQ(selection.counted_launches(c), 19u);
  EXPECT_EQ(check_against_baseline(o, c, selection), "");
}

// A first call that does all the work (and caches it), then trivial ones: the warm-up
// would hide it, so more warm-up than timed work is rejected with the figures.
TEST(KernelTime, WorkHiddenInTheWarmUpIsRejected) {
  TempDir original_dir, candidate_dir;
  GpuActivity original, candidate;
  for (int i = 0; i < 10; ++i) original.add_kernel(launch(kTranspose, 1000u * i, i == 0 ? 900 : 500));
  for (int i = 0; i < 10; ++i) candidate.add_kernel(launch(kTranspose, 100000u * i, i == 0 ? 50000 : 5));
  write_process(original_dir.path(), "gpu-1-1.json", original);
  write_process(candidate_dir.path(), "gpu-1-1.json", candidate);
  const std::string why = check_against_baseline(read_run_kernels(original_dir.path()),
                                                 read_run_kernels(candidate_dir.path()),
                                                 KernelSelection({}, {kTranspose}, 1));
  EXPECT_NE(why.find("0.050 ms of kernel time was left out as warm-up against 0.000 ms timed"), std::string::npos)
      << why;
}

// Splitting the work into two new kernels is honest: it passes, and only the earliest
// launch is left out (the original had one kernel to warm up).
TEST(KernelTime, WorkSplitIntoNewKernelsPasses) {
  TempDir original_dir, candidate_dir;
  GpuActivity original, candidate;
  for (int i = 0; i < 10; ++i) original.add_kernel(launch(kTranspose, 1000u * i, i == 0 ? 900 : 500));
  for (int i = 0; i < 10; ++i) {
    candidate.add_kernel(launch("_Z5firstPf", 1000u * i, i == 0 ? 300 : 100));
    candidate.add_kernel(launch("_Z6secondPf", 1000u * i + 200, i == 0 ? 300 : 100));
  }
  write_process(original_dir.path(), "gpu-1-1.json", original);
  write_process(candidate_dir.path(), "gpu-1-1.json", candidate);
  const RunKernels o = read_run_kernels(original_dir.path()), c = read_run_kernels(candidate_dir.path());
  const KernelSelection selection({}, {kTranspose}, 1);
  EXPECT_NEAR(selection.seconds(c), (900 + 300 + 900) * 1e-9, 1e-15);
  EXPECT_EQ(check_against_baseline(o, c, selection), "");
}

TEST(KernelTime, AMalformedFileIsAnErrorNamingIt) {
  TempDir dir;
  testing::write_file(dir.path() / "gpu-9-9.json", "{\"format\": ");
  try {
    read_run_kernels(dir.path());
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("gpu-9-9.json"), std::string::npos) << e.what();
  }
}

TEST(KernelTime, AnEmptyDirectoryHasNoProcesses) {
  TempDir dir;
  EXPECT_EQ(read_run_kernels(dir.path()).processes(), 0);
}

}  // namespace
}  // namespace maxcode
