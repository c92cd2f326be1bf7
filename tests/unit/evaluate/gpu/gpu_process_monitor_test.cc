// Processes holding a GPU context during a run, against the processes that reported
// their kernels: the decision, the descent through /proc that tells the run's
// processes from others, and the monitor's notes where NVML cannot answer. The
// process lists come from real processes of this machine (no GPU here): a listing
// function stands for the device.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "runner/evaluate/gpu/process_monitor.h"

namespace maxcode {
namespace {

TEST(GpuProcesses, MoreContextsThanReportsRejectsTheRun) {
  GpuProcessCount seen;
  seen.checked = true;
  seen.processes = 2;
  EXPECT_EQ(check_gpu_processes(seen, 1),
            "2 processes held a GPU context during the run, 1 reported its kernels: a process without maxcode's "
            "profiler did GPU work");
  EXPECT_EQ(check_gpu_processes(seen, 2), "");
  // A process that initialised CUDA without creating a context reports without being
  // seen: fewer seen than reported is fine.
  EXPECT_EQ(check_gpu_processes(seen, 3), "");
  seen.processes = 3;
  EXPECT_EQ(check_gpu_processes(seen, 1),
            "3 processes held a GPU context during the run, 1 reported its kernels: a process without maxcode's "
            "profiler did GPU work");
}

TEST(GpuProcesses, AnUncheckedCountNeverRejects) {
  GpuProcessCount seen;
  seen.processes = 5;
  seen.note = "GPU processes not counted: NVML unavailable";
  EXPECT_EQ(check_gpu_processes(seen, 1), "");
  EXPECT_EQ(to_json(seen)["note"], "GPU processes not counted: NVML unavailable");
  EXPECT_EQ(to_json(seen)["checked"], false);
}

// A child that sleeps, and a grandchild under it: real processes to descend through.
struct Tree {
  pid_t child = -1;
  pid_t grandchild = -1;
  Tree() {
    int fds[2];
    if (pipe(fds) != 0) return;
    child = fork();
    if (child == 0) {
      pid_t g = fork();
      if (g == 0) {
        pause();
        _exit(0);
      }
      ssize_t ignored = write(fds[1], &g, sizeof g);
      (void)ignored;
      pause();
      _exit(0);
    }
    if (read(fds[0], &grandchild, sizeof grandchild) != sizeof grandchild) grandchild = -1;
    close(fds[0]);
    close(fds[1]);
  }
  ~Tree() {
    if (grandchild > 0) kill(grandchild, SIGKILL);
    if (child > 0) {
      kill(child, SIGKILL);
      waitpid(child, nullptr, 0);
    }
  }
};

TEST(GpuProcesses, DescentIsReadFromProc) {
  Tree tree;
  ASSERT_GT(tree.grandchild, 0);
  EXPECT_EQ(in_tree_of(tree.grandchild, tree.child), true);
  EXPECT_EQ(in_tree_of(tree.grandchild, getpid()), true);
  EXPECT_EQ(in_tree_of(tree.child, tree.child), true);  // a command that execs the benchmark
  EXPECT_EQ(in_tree_of(tree.child, tree.grandchild), false);
  EXPECT_EQ(in_tree_of(getpid(), tree.child), false);
  EXPECT_EQ(in_tree_of(999999999, getpid()), std::nullopt);  // no such process
}

TEST(GpuProcesses, TheMonitorCountsOnlyTheRunsOwnProcesses) {
  Tree run, other;
  ASSERT_GT(run.grandchild, 0);
  ASSERT_GT(other.grandchild, 0);
  // The device lists the run's two processes and another run's process (another
  // candidate's check on the same GPU), which does not descend from this run's root.
  GpuProcessMonitor monitor([&] {
    return Nvml::ComputeProcesses{{static_cast<unsigned>(run.child), static_cast<unsigned>(run.grandchild),
                                   static_cast<unsigned>(other.child)},
                                  ""};
  });
  monitor.started(run.child);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  const GpuProcessCount seen = monitor.stop();
  EXPECT_TRUE(seen.checked) << seen.note;
  EXPECT_EQ(seen.processes, 2);
  EXPECT_GT(seen.samples, 0);
}

TEST(GpuProcesses, WhenNvmlCannotAnswerTheRunGetsANote) {
  GpuProcessMonitor failing([] { return Nvml::ComputeProcesses{{}, "nvmlDeviceGetComputeRunningProcesses: Not Supported"}; });
  failing.started(getpid());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  GpuProcessCount seen = failing.stop();
  EXPECT_FALSE(seen.checked);
  EXPECT_EQ(seen.note, "GPU processes not counted: nvmlDeviceGetComputeRunningProcesses: Not Supported");

  GpuProcessMonitor none(nullptr, "NVML unavailable (libnvidia-ml.so.1 not found (no NVIDIA driver))");
  seen = none.stop();
  EXPECT_FALSE(seen.checked);
  EXPECT_EQ(seen.note, "GPU processes not counted: NVML unavailable (libnvidia-ml.so.1 not found (no NVIDIA driver))");

  // Process ids from another pid namespace: listed, but not in our /proc.
  GpuProcessMonitor foreign([] { return Nvml::ComputeProcesses{{999999998u}, ""}; });
  foreign.started(getpid());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  seen = foreign.stop();
  EXPECT_FALSE(seen.checked);
  EXPECT_NE(seen.note.find("not visible here"), std::string::npos) << seen.note;

  // Without a driver, the monitor made for a device says why (this machine has none;
  // on a GPU machine it lists real processes).
  auto made = monitor_gpu_processes(std::nullopt);
  seen = made->stop();
  EXPECT_FALSE(seen.checked);
  EXPECT_FALSE(seen.note.empty());
}

}  // namespace
}  // namespace maxcode
