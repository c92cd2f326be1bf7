// A command's cgroup: memory, processes and CPU time of all its processes together,
// through run() as every command of a candidate meets them (issue 22 point 5).
#include "runner/util/cgroup.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "runner/util/process.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;

// Four processes that each touch `mb` MiB and then wait two seconds.
Command four_processes_touching(int mb) {
  Command c;
  c.shell = "for i in 1 2 3 4; do /usr/bin/python3 -c 'import time; b = b\"\\1\" * (" + std::to_string(mb) +
            " << 20); time.sleep(2)' & done; wait; echo done";
  c.timeout_s = 60;
  c.max_memory_bytes = 256u << 20;
  c.limit_settings.memory = "workspace.max_memory_mb";
  return c;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The groups of `pid`, as /proc/<pid>/cgroup names them.
std::string groups_of(long pid) { return read_text("/proc/" + std::to_string(pid) + "/cgroup"); }

// The directories of the group maxcode made for the process `pid` (its lines that name
// a maxcode-cmd group), under the hierarchies' mount points.
std::vector<fs::path> command_group_dirs(long pid) {
  std::vector<fs::path> dirs;
  std::istringstream lines(groups_of(pid));
  std::string line;
  while (std::getline(lines, line)) {
    const std::size_t at = line.find("/maxcode-cmd-");
    if (at == std::string::npos) continue;
    const std::string path = line.substr(line.find(':', line.find(':') + 1) + 1);
    for (const char* mount : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified", "/sys/fs/cgroup/memory",
                              "/sys/fs/cgroup/pids", "/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup/cpu,cpuacct"}) {
      std::error_code ec;
      if (fs::is_directory(fs::path(mount) / path.substr(1), ec)) dirs.push_back(fs::path(mount) / path.substr(1));
    }
  }
  return dirs;
}

TEST(CommandGroup, SaysHowTheLimitsAreHeldHere) {
  const CgroupSupport& s = cgroup_support();
  EXPECT_FALSE(s.summary.empty());
  if (!s.memory) EXPECT_NE(s.summary.find("RLIMIT_DATA"), std::string::npos) << s.summary;
  if (s.memory) EXPECT_NE(s.summary.find("memory (cgroup v"), std::string::npos) << s.summary;
  std::printf("limits here: %s\n", s.summary.c_str());
}

// Each process stays under the limit, all four together do not: per-process rlimits
// let this pass, the command's group stops it and says which limit and which setting.
TEST(CommandGroup, ProcessesThatTogetherPassTheMemoryLimitAreStopped) {
  if (!cgroup_support().memory) GTEST_SKIP() << "no writable memory cgroup here: " << cgroup_support().summary;
  Command c = four_processes_touching(100);
  Outcome o = run(c);
  EXPECT_FALSE(o.ok());
  EXPECT_FALSE(o.timed_out) << o.describe();
  EXPECT_EQ(o.limit_exceeded, "its processes used more than 256 MiB of memory together (workspace.max_memory_mb)")
      << o.describe() << "\n" << o.err;
  EXPECT_EQ(o.describe(), "stopped: " + o.limit_exceeded);
  // Stopped when the kernel first killed one, not when the others were done sleeping.
  EXPECT_LT(o.wall_s, 2.0) << o.describe();
  EXPECT_EQ(o.out.find("done"), std::string::npos) << o.out;
  std::printf("stopped after %.2f s: %s\n", o.wall_s, o.describe().c_str());

  // The same command with each process held on its own runs to the end.
  c.limit_scope = LimitScope::kProcess;
  Outcome each = run(c);
  EXPECT_TRUE(each.ok()) << each.describe() << "\n" << each.err;
  EXPECT_EQ(each.out, "done\n");
}

TEST(CommandGroup, ACommandUnderTheMemoryLimitRunsNormally) {
  if (!cgroup_support().memory) GTEST_SKIP() << "no writable memory cgroup here: " << cgroup_support().summary;
  Command c = four_processes_touching(30);
  Outcome o = run(c);
  EXPECT_TRUE(o.ok()) << o.describe() << "\n" << o.err;
  EXPECT_EQ(o.out, "done\n");
  EXPECT_TRUE(o.limit_exceeded.empty()) << o.limit_exceeded;
}

// The command runs in a group of its own, which is gone afterwards with everything in
// it: a daemon that left the process group (setsid) does not outlive the command.
TEST(CommandGroup, TheGroupAndEveryProcessInItAreGoneAfterwards) {
  if (!cgroup_support().memory && !cgroup_support().processes)
    GTEST_SKIP() << "no writable cgroup here: " << cgroup_support().summary;
  Command c;
  c.shell = "setsid sleep 30 & echo $!; sleep 0.3";
  c.timeout_s = 20;
  c.max_memory_bytes = 512u << 20;
  c.max_processes = 64;
  std::vector<fs::path> dirs;
  std::string groups;
  c.started = [&](long pid) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    groups = groups_of(pid);
    dirs = command_group_dirs(pid);
  };
  Outcome o = run(c);
  ASSERT_TRUE(o.ok()) << o.describe() << "\n" << o.err;
  EXPECT_NE(groups.find("/maxcode-cmd-"), std::string::npos) << groups;
  ASSERT_FALSE(dirs.empty()) << groups;
  for (const auto& dir : dirs) EXPECT_FALSE(fs::exists(dir)) << dir << " is left behind";
  const long daemon = std::stol(o.out);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = kill(static_cast<pid_t>(daemon), 0) != 0 && errno == ESRCH;
    if (!gone && read_text("/proc/" + std::to_string(daemon) + "/stat").find(") Z") != std::string::npos) gone = true;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << "the setsid daemon " << daemon << " outlived its command";
}

TEST(CommandGroup, WithoutLimitsOrPerProcessNoGroupIsMade) {
  Command c;
  c.shell = "cat /proc/self/cgroup";
  c.timeout_s = 10;
  Outcome none = run(c);
  EXPECT_EQ(none.out.find("maxcode-cmd-"), std::string::npos) << none.out;
  c.max_memory_bytes = 512u << 20;
  c.limit_scope = LimitScope::kProcess;
  Outcome each = run(c);
  EXPECT_EQ(each.out.find("maxcode-cmd-"), std::string::npos) << each.out;
}

// A fork bomb meets pids.max, which counts this command's processes only (RLIMIT_NPROC
// counts the user's, and not root's at all), and the failure says which limit.
TEST(CommandGroup, AForkPastTheProcessLimitIsRefusedAndReported) {
  if (!cgroup_support().processes) GTEST_SKIP() << "no writable pids cgroup here: " << cgroup_support().summary;
  Command c;
  c.shell = "i=0; while [ $i -lt 100 ]; do sleep 5 & i=$((i+1)); done; wait";
  c.timeout_s = 30;
  c.max_processes = 20;
  c.limit_settings.processes = "workspace.max_processes";
  Outcome o = run(c);
  EXPECT_FALSE(o.ok()) << o.describe();
  EXPECT_EQ(o.limit_exceeded, "its processes reached 20 at once, and a fork past that was refused "
                              "(workspace.max_processes)")
      << o.describe() << "\n" << o.err;
  EXPECT_LT(o.wall_s, 5.0) << o.describe();
}

TEST(CommandGroup, CpuTimePastTheLimitIsStopped) {
  if (!cgroup_support().cpu) GTEST_SKIP() << "no cgroup counts CPU time here: " << cgroup_support().summary;
  Command c;
  c.shell = "while :; do :; done";
  c.timeout_s = 30;
  c.max_cpu_s = 0.5;
  c.limit_settings.cpu = "workspace.max_cpu_s";
  Outcome o = run(c);
  EXPECT_FALSE(o.timed_out) << o.describe();
  EXPECT_EQ(o.limit_exceeded, "its processes used more than 0.5 s of CPU time together (workspace.max_cpu_s)")
      << o.describe();
  EXPECT_LT(o.wall_s, 5.0) << o.describe();
}

}  // namespace
}  // namespace maxcode
