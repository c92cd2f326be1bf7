#include "runner/evaluate/gpu/launch_consistency.h"

#include <gtest/gtest.h>

namespace maxcode {
namespace {

// Totals as CUPTI reports them for one run of a benchmark that calls the target 20
// times (the figures are those of the blur kernel of examples/cuda-plain on an H100).
KernelTotals kernel(const std::string& name, std::uint64_t launches, std::uint64_t min_ns, std::uint64_t max_ns,
                    std::uint64_t total_ns) {
  KernelTotals k;
  k.name = k.demangled = name;
  k.launches = launches;
  k.min_ns = min_ns;
  k.max_ns = max_ns;
  k.total_ns = total_ns;
  return k;
}

RunKernels run_of(std::vector<KernelTotals> kernels) {
  RunKernels run;
  run.calls.push_back({});  // one process reported
  for (auto& k : kernels) run.kernels[k.name] = k;
  return run;
}

const RunKernels kOriginal = run_of({kernel("blur_kernel", 20, 410000, 430000, 8400000)});
const KernelSelection kAll({}, {"blur_kernel"}, 0);

TEST(LaunchConsistency, AnHonestFasterKernelPasses) {
  EXPECT_EQ(check_launch_consistency(kOriginal, run_of({kernel("blur_tiled", 20, 200000, 215000, 4100000)}), kAll), "");
}

TEST(LaunchConsistency, ComputeOnceThenATrivialKernelIsACache) {
  const RunKernels cheat = run_of({kernel("blur_kernel", 1, 420000, 420000, 420000),
                                   kernel("touch_kernel", 19, 1800, 2100, 38000)});
  const std::string why = check_launch_consistency(kOriginal, cheat, kAll);
  EXPECT_NE(why.find("kernel blur_kernel ran 1 time(s) and did 92% of the counted work"), std::string::npos) << why;
  EXPECT_NE(why.find("20 launches"), std::string::npos) << why;
}

TEST(LaunchConsistency, ACostlyLaunchThenTrivialOnesOfOneKernelIsCaught) {
  // One kernel that returns at once when it has seen the pointers before.
  const RunKernels cheat = run_of({kernel("blur_kernel", 20, 1500, 420000, 448500)});
  const std::string why = check_launch_consistency(kOriginal, cheat, kAll);
  EXPECT_NE(why.find("range from 0.0015 ms to 0.42 ms over 20 launches"), std::string::npos) << why;
}

TEST(LaunchConsistency, WorkOnEveryFourthCallIsCaught) {
  const RunKernels cheat = run_of({kernel("blur_kernel", 5, 410000, 425000, 2080000)});
  EXPECT_NE(check_launch_consistency(kOriginal, cheat, kAll).find("ran 5 time(s)"), std::string::npos);
}

TEST(LaunchConsistency, PartialWorkOnLaterCallsIsCaught) {
  // The full image on the first call, an eighth of the rows afterwards.
  const RunKernels cheat = run_of({kernel("blur_full_kernel", 20, 55000, 420000, 1465000)});
  const std::string why = check_launch_consistency(kOriginal, cheat, kAll);
  EXPECT_NE(why.find("range from 0.055 ms to 0.42 ms"), std::string::npos) << why;
}

TEST(LaunchConsistency, AColdFirstLaunchIsNotACache) {
  const RunKernels honest = run_of({kernel("blur_tile_kernel", 20, 190000, 520000, 4300000)});
  EXPECT_EQ(check_launch_consistency(kOriginal, honest, kAll), "");
}

TEST(LaunchConsistency, DurationsAreJudgedOnlyFromARunAloneOnTheGpu) {
  // examples/cuda-ops on an H200: the honest tiled matmul, one launch stretched tenfold
  // by another candidate's check run on the same GPU. Judged from a run alone, the same
  // figures are a cache; from a shared run, they say nothing.
  const RunKernels stretched = run_of({kernel("blur_kernel", 20, 28280, 297100, 5524339)});
  EXPECT_NE(check_launch_consistency(kOriginal, stretched, kAll, true), "");
  EXPECT_EQ(check_launch_consistency(kOriginal, stretched, kAll, false), "");
  // Launch counts are no duration: a kernel run on a few calls only is caught anywhere.
  const RunKernels every_fourth = run_of({kernel("blur_kernel", 5, 410000, 425000, 2080000)});
  EXPECT_NE(check_launch_consistency(kOriginal, every_fourth, kAll, false).find("ran 5 time(s)"), std::string::npos);
}

TEST(LaunchConsistency, AnOriginalWhoseLaunchesVaryIsNoYardstick) {
  const RunKernels varying = run_of({kernel("blur_kernel", 20, 1000, 430000, 4000000)});
  const RunKernels cheat = run_of({kernel("blur_kernel", 1, 420000, 420000, 420000)});
  EXPECT_EQ(check_launch_consistency(varying, cheat, kAll), "");
}

}  // namespace
}  // namespace maxcode
