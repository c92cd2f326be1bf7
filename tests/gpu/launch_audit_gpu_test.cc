// The launch audit and the process count on a real GPU (ctest label `gpu`; skipped
// without one): tests/fixtures/gpu/launch_probe.cu, built with nvcc, runs under the
// CUPTI injection in each of its modes, reporting through the profiler socket from
// inside the sandbox, watched by the NVML process monitor, as a timed run is. The
// counts each mode must leave, and the verdict against the plain run, are checked;
// the figures are printed.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "runner/evaluate/gpu/cuda_tools.h"
#include "runner/evaluate/gpu/kernel_time.h"
#include "runner/evaluate/gpu/launch_audit.h"
#include "runner/evaluate/gpu/process_monitor.h"
#include "runner/evaluate/gpu/record_socket.h"
#include "runner/instrument/inject_paths.h"
#include "runner/util/process.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;
using testing::have_gpu;
using testing::source_path;
using testing::TempDir;

struct ProbeRun {
  RunKernels run;
  GpuProcessCount processes;
  std::string problem;  // from the channel
  Outcome outcome;
};

ProbeRun run_probe(const fs::path& probe, const fs::path& injection, const fs::path& workspace,
                   const std::string& mode) {
  ProbeRun r;
  RecordSocket socket;
  std::unique_ptr<GpuProcessMonitor> monitor = monitor_gpu_processes(Nvml::instance().device_by_index(0));
  Command c;
  c.shell = shell_quote(probe.string()) + " " + mode;
  c.cwd = workspace.string();
  c.env = {{"CUDA_INJECTION64_PATH", injection.string()}, {"MAXCODE_PROFILE_SOCKET", socket.path()}};
  c.timeout_s = 120;
  c.isolate = true;
  c.writable_paths = {workspace.string()};
  // The sandbox shows nothing of the host beyond the system's directories: the socket's
  // directory and the injection library's, as the evaluator shows them.
  c.readable_paths = {socket.dir(), injection.parent_path().string()};
  c.started = [&monitor](long pid) { monitor->started(pid); };
  r.outcome = run(c);
  r.processes = monitor->stop();
  RecordStreams streams = socket.finish();
  if (!streams.problems.empty()) r.problem = streams.problems.front();
  for (const GpuSummary& s : streams.summaries) add_summary(r.run, s);
  std::printf("launch-audit %-6s %s, %d process(es) reported, NVML: %d process(es) (%s)\n", mode.c_str(),
              r.outcome.describe().c_str(), r.run.processes(), r.processes.processes,
              r.processes.checked ? "checked" : r.processes.note.c_str());
  for (const ProcessCalls& p : r.run.calls)
    std::printf("launch-audit %-6s pid %ld ppid %ld counted %d launches %llu records %llu graph launches %llu "
                "contexts %llu ipc calls %llu\n",
                mode.c_str(), p.pid, p.ppid, p.api.counted, static_cast<unsigned long long>(p.api.launches),
                static_cast<unsigned long long>(p.api.launch_records),
                static_cast<unsigned long long>(p.api.graph_launches),
                static_cast<unsigned long long>(p.api.contexts_created),
                static_cast<unsigned long long>(p.api.ipc_calls()));
  return r;
}

TEST(LaunchAuditGpu, EachCheatOfTheProbeIsSeen) {
  const fs::path source = source_path("tests/fixtures/gpu/launch_probe.cu");
  ASSERT_TRUE(fs::exists(source)) << source << " not found: set MAXCODE_SOURCE_DIR to the checkout";
  if (!have_gpu()) GTEST_SKIP() << "no GPU here (nvidia-smi -L fails)";
  const fs::path injection = find_inject_libraries().cupti;
  ASSERT_FALSE(injection.empty()) << "libmaxcode_cupti.so not found beside maxcode";
  const std::string nvcc = find_cuda_tool("nvcc");
  ASSERT_FALSE(nvcc.empty()) << "nvcc not found";
  TempDir dir;
  const fs::path probe = dir / "launch_probe";
  Command build;
  build.shell = shell_quote(nvcc) + " -o " + shell_quote(probe.string()) + " " + shell_quote(source.string()) +
                " -lcuda";
  build.timeout_s = 300;
  Outcome built = run(build);
  ASSERT_TRUE(built.ok()) << built.tail();
  // The probe runs isolated: as the sandbox's user where this test runs as root (the GPU
  // machines), which must be able to enter and write its workspace, as the evaluator's are.
  hand_to_sandbox_user(dir.path().string());

  const ProbeRun plain = run_probe(probe, injection, dir.path(), "plain");
  ASSERT_TRUE(plain.outcome.ok()) << plain.outcome.tail();
  EXPECT_EQ(plain.problem, "");
  ASSERT_EQ(plain.run.calls.size(), 1u);
  const ApiCalls& api = plain.run.calls[0].api;
  EXPECT_TRUE(api.counted);
  EXPECT_EQ(api.launches, 13u);  // the graph's captured launches are not counted
  EXPECT_EQ(api.launch_records, 13u);
  EXPECT_EQ(api.graph_launches, 2u);
  EXPECT_EQ(plain.run.kernels.begin()->second.launches, 19u);  // 13 + the graph's 2 x 3
  EXPECT_EQ(check_launch_audit(plain.run, plain.run), "");
  EXPECT_EQ(check_gpu_processes(plain.processes, plain.run.processes()), "");

  const ProbeRun hide = run_probe(probe, injection, dir.path(), "hide");
  ASSERT_TRUE(hide.outcome.ok()) << hide.outcome.tail();
  EXPECT_EQ(check_launch_audit(plain.run, hide.run),
            "kernel activity records missing: 18 launches made, 13 recorded (activity recording was switched off "
            "or records were lost)");

  const ProbeRun ipc = run_probe(probe, injection, dir.path(), "ipc");
  ASSERT_TRUE(ipc.outcome.ok()) << ipc.outcome.tail();
  EXPECT_EQ(check_launch_audit(plain.run, ipc.run),
            "CUDA IPC used (cuIpcGetMemHandle x1): work may run in another process outside the timer");

  const ProbeRun child = run_probe(probe, injection, dir.path(), "child");
  ASSERT_TRUE(child.outcome.ok()) << child.outcome.tail();
  EXPECT_EQ(child.run.processes(), 1);  // the child dropped the injection's variables
  if (!child.processes.checked) GTEST_SKIP() << "NVML could not count processes: " << child.processes.note;
  EXPECT_EQ(check_gpu_processes(child.processes, child.run.processes()),
            "2 processes held a GPU context during the run, 1 reported its kernels: a process without maxcode's "
            "profiler did GPU work");
}

}  // namespace
}  // namespace maxcode
