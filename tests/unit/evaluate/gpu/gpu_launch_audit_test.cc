// Driver calls against kernel records: the per-process files an injection writes, read
// back as a run, and the verdict on a candidate's run against the original's.
#include <gtest/gtest.h>

#include "runner/evaluate/gpu/launch_audit.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

using testing::TempDir;

constexpr const char* kReal = "_Z14layernorm_realPfPKfi";
constexpr const char* kDecoy = "_Z5decoyPf";

// One process's file: `recorded` launches of `kernel` left records, `launches` were made.
struct Process {
  std::uint64_t launches = 0;
  std::uint64_t recorded = 0;
  std::string kernel = kReal;
  std::map<std::string, std::uint64_t> ipc;
  std::uint64_t contexts = 0;
  bool counted = true;
  bool complete = true;
  std::uint64_t graph_kernels = 0;  // records of kernels a graph launched
};

RunKernels run_of(const std::vector<Process>& processes) {
  TempDir dir;
  int n = 0;
  for (const Process& p : processes) {
    GpuActivity a;
    for (std::uint64_t i = 0; i < p.recorded; ++i) {
      KernelLaunch k;
      k.name = p.kernel;
      k.start_ns = 1000 * i;
      k.end_ns = 1000 * i + 500;
      a.add_kernel(k);
    }
    for (std::uint64_t i = 0; i < p.graph_kernels; ++i) {
      KernelLaunch k;
      k.name = kDecoy;
      k.start_ns = 1000000 + 1000 * i;
      k.end_ns = k.start_ns + 10;
      k.from_graph = true;
      a.add_kernel(k);
    }
    GpuSummary s = a.summary(100 + n, "/work/bench", p.complete);
    s.api.counted = p.counted;
    s.api.launches = p.launches;
    s.api.graph_launches = p.graph_kernels > 0 ? 1 : 0;
    s.api.ipc = p.ipc;
    s.api.contexts_created = p.contexts;
    ++n;
    testing::write_file(dir.path() / ("gpu-" + std::to_string(n) + ".json"), to_json(s).dump());
  }
  return read_run_kernels(dir.path());
}

const RunKernels kOriginal = run_of({{.launches = 40, .recorded = 40}});

TEST(LaunchAudit, AnHonestRunWithEveryLaunchRecordedPasses) {
  EXPECT_EQ(check_launch_audit(kOriginal, run_of({{.launches = 20, .recorded = 20}})), "");
}

TEST(LaunchAudit, RecordingSwitchedOffAroundTheRealKernelIsCaught) {
  // 20 decoys recorded, 20 real launches made while CONCURRENT_KERNEL was disabled.
  const RunKernels cheat = run_of({{.launches = 40, .recorded = 20, .kernel = kDecoy}});
  EXPECT_EQ(check_launch_audit(kOriginal, cheat),
            "kernel activity records missing: 40 launches made, 20 recorded (activity recording was "
            "switched off or records were lost)");
}

TEST(LaunchAudit, GraphKernelsNeitherHideNorFakeMissingRecords) {
  // A graph's kernels have no launch call each: an honest graph run passes...
  EXPECT_EQ(check_launch_audit(kOriginal, run_of({{.launches = 2, .recorded = 2, .graph_kernels = 38}})), "");
  // ...and graph records do not make up for direct launches that left none.
  EXPECT_NE(check_launch_audit(kOriginal, run_of({{.launches = 40, .recorded = 20, .graph_kernels = 20}})), "");
}

TEST(LaunchAudit, WhatTheOriginalLeavesUnrecordedIsTheTolerance) {
  const RunKernels original = run_of({{.launches = 41, .recorded = 40}});  // one in flight at exit
  EXPECT_EQ(check_launch_audit(original, run_of({{.launches = 41, .recorded = 40}})), "");
  EXPECT_NE(check_launch_audit(original, run_of({{.launches = 41, .recorded = 39}})), "");
}

TEST(LaunchAudit, AProcessWhoseReportWasCutOffIsCaught) {
  // Its last snapshot lags behind its launches: not matched, but a report cut off
  // (the benchmark closed the injection's channel after a snapshot of decoys) is itself
  // the finding.
  EXPECT_EQ(check_launch_audit(kOriginal, run_of({{.launches = 40, .recorded = 12, .complete = false}})),
            "process 100 (/work/bench) ended without its final GPU summary (its report to maxcode was cut off): its "
            "kernels are not all known");
  // An original that ends the same way sets the bar.
  const RunKernels original = run_of({{.launches = 40, .recorded = 40, .complete = false}});
  EXPECT_EQ(check_launch_audit(original, run_of({{.launches = 40, .recorded = 12, .complete = false}})), "");
}

TEST(LaunchAudit, CallbacksTakenOrFinalizedByTheProgramAreCaught) {
  const RunKernels cheat = run_of({{.launches = 0, .recorded = 20, .counted = false}});
  EXPECT_EQ(check_launch_audit(kOriginal, cheat),
            "kernel launches were not counted in process 100 (/work/bench): CUPTI's callbacks were taken or "
            "finalized by the program (the original's launches were counted)");
  // Where the original's were not counted either (older injection, a tool holding
  // CUPTI), there is nothing to compare.
  const RunKernels uncounted = run_of({{.launches = 0, .recorded = 40, .counted = false}});
  EXPECT_EQ(check_launch_audit(uncounted, cheat), "");
}

TEST(LaunchAudit, CudaIpcIsReportedWithTheCallsMade) {
  const RunKernels cheat =
      run_of({{.launches = 20, .recorded = 20, .kernel = kDecoy, .ipc = {{"cuIpcGetMemHandle", 3}}},
              {.launches = 0, .recorded = 0, .ipc = {{"cuIpcOpenMemHandle", 1}}}});
  EXPECT_EQ(check_launch_audit(kOriginal, cheat),
            "CUDA IPC used (cuIpcGetMemHandle x3, cuIpcOpenMemHandle x1): work may run in another process "
            "outside the timer");
  // The same calls in the original are the benchmark's, not the candidate's.
  const RunKernels original = run_of({{.launches = 40, .recorded = 40, .ipc = {{"cuIpcGetMemHandle", 3}}},
                                      {.launches = 0, .recorded = 0, .ipc = {{"cuIpcOpenMemHandle", 1}}}});
  EXPECT_EQ(check_launch_audit(original, cheat), "");
}

TEST(LaunchAudit, MoreContextsThanTheOriginalAreReported) {
  EXPECT_EQ(check_launch_audit(kOriginal, run_of({{.launches = 40, .recorded = 40, .contexts = 1}})),
            "created 1 CUDA context(s) of its own, the original 0 (cuCtxCreate, cuGreenCtxCreate): work may run "
            "outside the context the timer expects");
  const RunKernels original = run_of({{.launches = 40, .recorded = 40, .contexts = 1}});
  EXPECT_EQ(check_launch_audit(original, run_of({{.launches = 40, .recorded = 40, .contexts = 1}})), "");
}

}  // namespace
}  // namespace maxcode
