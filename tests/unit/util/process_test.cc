#include "runner/util/process.h"

#include <gtest/gtest.h>

#include <sstream>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "runner/util/secrets.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;
using maxcode::testing::TempDir;

Command shell(const std::string& text, double timeout_s = 10) {
  Command command;
  command.shell = text;
  command.timeout_s = timeout_s;
  return command;
}

// Run by root, a sandboxed command is kSandboxUid's: a directory it writes must be
// handed to it, one it only reads must be readable by others (TempDir makes 0700).
const fs::path& writable_by_sandbox(const TempDir& dir) {
  hand_to_sandbox_user(dir.path().string());
  return dir.path();
}
const fs::path& readable_by_sandbox(const TempDir& dir) {
  fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                  fs::perms::others_read | fs::perms::others_exec);
  return dir.path();
}

// A killed process stays a zombie until its (new) parent reaps it, and kill(pid, 0)
// succeeds on zombies, so a zombie counts as gone. Waits up to a second.
bool process_gone(pid_t pid) {
  for (int i = 0; i < 100; ++i) {
    if (kill(pid, 0) != 0 && errno == ESRCH) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    auto paren = text.rfind(')');
    if (paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'Z') {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

pid_t read_pid(const fs::path& file) {
  return static_cast<pid_t>(std::stol(testing::read_file(file)));
}

// ---------------------------------------------------------------- plain runs

TEST(ProcessTest, ReportsExitCode) {
  Outcome success = run(shell("true"));
  EXPECT_TRUE(success.ok());
  EXPECT_EQ(success.exit_code, 0);
  EXPECT_EQ(success.describe(), "exit code 0");

  Outcome failure = run(shell("exit 3"));
  EXPECT_FALSE(failure.ok());
  EXPECT_EQ(failure.exit_code, 3);
  EXPECT_EQ(failure.term_signal, 0);
  EXPECT_EQ(failure.describe(), "exit code 3");
  EXPECT_EQ(failure.isolation, Isolation::kNone);
}

TEST(ProcessTest, StartedHookGetsTheRootOfTheCommandsProcesses) {
  // A monitor attributes processes to a command by descent from this pid: the shell's
  // child must descend from it (its parent, or the parent's parent).
  long root = 0;
  Command command = shell("sh -c 'cat /proc/$$/stat'");
  command.started = [&root](long pid) { root = pid; };
  Outcome outcome = run(command);
  ASSERT_TRUE(outcome.ok()) << outcome.describe();
  ASSERT_GT(root, 0);
  std::istringstream fields(outcome.out.substr(outcome.out.rfind(')') + 1));
  std::string state;
  long ppid = 0;
  fields >> state >> ppid;
  EXPECT_EQ(ppid, root) << outcome.out;
}

TEST(ProcessTest, CapturesStdoutAndStderrSeparately) {
  Outcome outcome = run(shell("echo to-out; echo to-err >&2; printf 'no newline'"));
  ASSERT_TRUE(outcome.ok()) << outcome.describe();
  EXPECT_EQ(outcome.out, "to-out\nno newline");
  EXPECT_EQ(outcome.err, "to-err\n");
}

TEST(ProcessTest, StdinIsEmpty) {
  Outcome outcome = run(shell("cat; echo done", 5));
  ASSERT_TRUE(outcome.ok()) << outcome.describe();
  EXPECT_EQ(outcome.out, "done\n");
}

TEST(ProcessTest, PassesAndOverridesEnvironment) {
  setenv("MAXCODE_TEST_INHERITED", "from-parent", 1);
  setenv("MAXCODE_TEST_OVERRIDDEN", "old", 1);
  Command command = shell(
      "echo \"$MAXCODE_TEST_INHERITED $MAXCODE_TEST_OVERRIDDEN $MAXCODE_TEST_ADDED\"; "
      "env | grep -c '^MAXCODE_TEST_OVERRIDDEN='");
  command.env = {{"MAXCODE_TEST_OVERRIDDEN", "new"}, {"MAXCODE_TEST_ADDED", "a b"}};
  Outcome outcome = run(command);
  ASSERT_TRUE(outcome.ok()) << outcome.describe() << outcome.err;
  EXPECT_EQ(outcome.out, "from-parent new a b\n1\n");
}

TEST(ProcessTest, RunsInGivenDirectory) {
  TempDir dir;
  Command command = shell("pwd; echo hi > here.txt");
  command.cwd = dir.path().string();
  Outcome outcome = run(command);
  ASSERT_TRUE(outcome.ok()) << outcome.describe() << outcome.err;
  EXPECT_EQ(outcome.out, fs::canonical(dir.path()).string() + "\n");
  EXPECT_EQ(testing::read_file(dir / "here.txt"), "hi\n");
}

TEST(ProcessTest, MissingDirectoryIsASpawnFailure) {
  TempDir dir;
  Command command = shell("echo should not run");
  command.cwd = (dir / "missing").string();
  Outcome outcome = run(command);
  EXPECT_TRUE(outcome.spawn_failed);
  EXPECT_FALSE(outcome.ok());
  EXPECT_NE(outcome.spawn_error.find("does not exist"), std::string::npos) << outcome.spawn_error;
  EXPECT_NE(outcome.spawn_error.find(command.cwd), std::string::npos) << outcome.spawn_error;
  EXPECT_NE(outcome.describe().find("could not start"), std::string::npos);
  EXPECT_TRUE(outcome.out.empty());
}

// ---------------------------------------------------------------- limits

TEST(ProcessTest, TimeoutKillsTheCommand) {
  auto start = std::chrono::steady_clock::now();
  Outcome outcome = run(shell("echo started; sleep 100", 0.3));
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(outcome.timed_out);
  EXPECT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.term_signal, 0);  // we killed it; not a crash
  EXPECT_EQ(outcome.out, "started\n");  // output before the kill is kept
  EXPECT_GE(outcome.wall_s, 0.3);
  EXPECT_LT(elapsed, 2.0);
  EXPECT_NE(outcome.describe().find("timed out after 0."), std::string::npos)
      << outcome.describe();
}

TEST(ProcessTest, TimeoutKillsBackgroundedGrandchild) {
  TempDir dir;
  Command command = shell("sleep 100 & echo $! > grandchild.pid; sleep 100", 0.5);
  command.cwd = dir.path().string();
  Outcome outcome = run(command);
  EXPECT_TRUE(outcome.timed_out);
  EXPECT_LT(outcome.wall_s, 2.0);
  ASSERT_TRUE(fs::exists(dir / "grandchild.pid"));
  EXPECT_TRUE(process_gone(read_pid(dir / "grandchild.pid")));
}

TEST(ProcessTest, BackgroundChildrenDoNotOutliveTheCommand) {
  TempDir dir;
  // The background sleep holds stdout open; we must not wait for it.
  Command command = shell("sleep 100 & echo $! > grandchild.pid; echo done", 5);
  command.cwd = dir.path().string();
  Outcome outcome = run(command);
  ASSERT_TRUE(outcome.ok()) << outcome.describe();
  EXPECT_EQ(outcome.out, "done\n");
  EXPECT_LT(outcome.wall_s, 1.0);
  EXPECT_TRUE(process_gone(read_pid(dir / "grandchild.pid")));
}

TEST(ProcessTest, OutputFloodIsCutOff) {
  Command command = shell("yes", 10);
  command.output_cap = 1 << 20;
  Outcome outcome = run(command);
  EXPECT_TRUE(outcome.output_exceeded);
  EXPECT_FALSE(outcome.timed_out);
  EXPECT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.term_signal, 0);
  EXPECT_EQ(outcome.out.size() + outcome.err.size(), command.output_cap);
  EXPECT_LT(outcome.wall_s, 2.0);
  EXPECT_EQ(outcome.describe(), "output exceeded 1048576 bytes");
}

TEST(ProcessTest, OutputCapCountsBothStreams) {
  Command command = shell("head -c 600000 /dev/zero; head -c 600000 /dev/zero >&2; sleep 100");
  command.output_cap = 1 << 20;
  Outcome outcome = run(command);
  EXPECT_TRUE(outcome.output_exceeded);
  EXPECT_EQ(outcome.out.size() + outcome.err.size(), command.output_cap);
  EXPECT_LT(outcome.wall_s, 2.0);
}

TEST(ProcessTest, OutputUpToTheCapIsFine) {
  Command command = shell("head -c 1000 /dev/zero");
  command.output_cap = 1000;
  Outcome outcome = run(command);
  EXPECT_TRUE(outcome.ok()) << outcome.describe();
  EXPECT_EQ(outcome.out.size(), 1000u);
}

TEST(ProcessTest, ReportsCrashSignal) {
  Outcome outcome = run(shell("kill -SEGV $$"));
  EXPECT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.term_signal, SIGSEGV);
  EXPECT_FALSE(outcome.timed_out);
  EXPECT_NE(outcome.describe().find("signal 11"), std::string::npos) << outcome.describe();
  EXPECT_NE(outcome.describe().find("Segmentation fault"), std::string::npos)
      << outcome.describe();
}

TEST(ProcessTest, FileSizeLimitStopsLargeWrites) {
  TempDir dir;
  Command command = shell("head -c 10000000 /dev/zero > big.bin");
  command.cwd = dir.path().string();
  command.max_file_bytes = 1 << 20;
  Outcome outcome = run(command);
  EXPECT_FALSE(outcome.ok()) << outcome.describe();
  EXPECT_LE(fs::file_size(dir / "big.bin"), std::uintmax_t{1} << 20);

  command.shell = "head -c 100000 /dev/zero > small.bin";
  Outcome small = run(command);
  EXPECT_TRUE(small.ok()) << small.describe() << small.err;
  EXPECT_EQ(fs::file_size(dir / "small.bin"), 100000u);
}

// Issue 22 point 5: a candidate wrote 5 GB into its workspace. The writable paths are
// measured while the command runs; past the limit it is stopped and the outcome says why.
TEST(ProcessLimits, AWorkspaceThatGrowsPastTheLimitIsStopped) {
  TempDir dir;
  testing::write_file(dir / "before.bin", std::string(4 << 20, 'x'));  // what was there is not counted
  Command command = shell("i=0; while [ $i -lt 200 ]; do head -c 1048576 /dev/zero > f$i; i=$((i+1)); sleep 0.1; done");
  command.cwd = dir.path().string();
  command.writable_paths = {dir.path().string()};
  command.max_disk_bytes = 16u << 20;
  command.timeout_s = 60;
  Outcome o = run(command);
  EXPECT_FALSE(o.ok());
  EXPECT_FALSE(o.timed_out);
  EXPECT_NE(o.describe().find("to its writable paths, over the limit of 16 MiB"), std::string::npos) << o.describe();
  // About 10 MiB a second, for 20 s: stopped within a second or two of passing the
  // limit (measured every second), not at the end.
  EXPECT_LT(o.wall_s, 8.0);
  std::uintmax_t written = 0;
  for (const auto& entry : fs::directory_iterator(dir.path())) written += entry.file_size();
  EXPECT_LT(written, (4u << 20) + (48u << 20));

  // Under the limit nothing happens.
  command.shell = "head -c 2000000 /dev/zero > small.bin";
  Outcome small = run(command);
  EXPECT_TRUE(small.ok()) << small.describe();
}

// A fork bomb: the processes past the limit cannot be started, and the command ends.
TEST(ProcessLimits, ProcessesPastTheLimitCannotBeStarted) {
  int modes_run = 0;
  for (Isolation mode : {Isolation::kBubblewrap, Isolation::kNamespaces, Isolation::kNone}) {
    // Root is exempt from RLIMIT_NPROC: only a sandbox that drops root holds it there.
    if (mode == Isolation::kNone && geteuid() == 0) continue;
    Command probe = shell("true");
    probe.isolate = mode != Isolation::kNone;
    if (probe.isolate && !run_isolated(probe, mode).ok()) continue;
    SCOPED_TRACE(isolation_name(mode));
    ++modes_run;
    TempDir dir;
    hand_to_sandbox_user(dir.path().string());
    Command c = shell("i=0; while [ $i -lt 200 ]; do (touch s$i; sleep 3) & i=$((i+1)); done 2>err; wait");
    c.isolate = mode != Isolation::kNone;
    c.cwd = dir.path().string();
    c.writable_paths = {dir.path().string()};
    c.max_processes = 40;
    c.timeout_s = 60;
    Outcome o = run_isolated(c, mode);
    ASSERT_FALSE(o.timed_out) << o.describe();
    long started = 0;
    for (const auto& entry : fs::directory_iterator(dir.path()))
      started += entry.path().filename().string()[0] == 's';
    const std::string refused = o.err + (fs::exists(dir / "err") ? testing::read_file(dir / "err") : "");
    EXPECT_LE(started, 40) << refused;
    EXPECT_GT(started, 0) << o.describe() << refused;
    EXPECT_NE(refused.find("fork"), std::string::npos) << refused;
  }
  // Root without a sandbox is exempt: nothing here could show the limit.
  if (modes_run == 0) GTEST_SKIP() << "root, and no sandbox mode works here";
}

// The sandbox's /tmp and /dev/shm are memory: no larger than the workspace quota, so
// that writing there cannot fill the machine's RAM (issue 22 point 5).
TEST(ProcessLimits, TheSandboxsTmpIsNoLargerThanTheWorkspaceQuota) {
  int modes_run = 0;
  for (Isolation mode : {Isolation::kBubblewrap, Isolation::kNamespaces}) {
    Command probe = shell("true");
    probe.isolate = true;
    if (!run_isolated(probe, mode).ok()) continue;
    SCOPED_TRACE(isolation_name(mode));
    ++modes_run;
    TempDir dir;
    hand_to_sandbox_user(dir.path().string());
    Command c = shell("head -c 12000000 /dev/zero > /tmp/big; echo tmp $?; head -c 12000000 /dev/zero > /dev/shm/big; "
                      "echo shm $?; head -c 2000000 /dev/zero > /tmp/small && echo small ok");
    c.isolate = true;
    c.cwd = dir.path().string();
    c.writable_paths = {dir.path().string()};
    c.max_disk_bytes = 8u << 20;
    c.timeout_s = 60;
    Outcome o = run_isolated(c, mode);
    ASSERT_FALSE(o.timed_out) << o.describe();
    EXPECT_EQ(o.out.find("tmp 0"), std::string::npos) << o.out << o.err;
    EXPECT_NE(o.out.find("tmp 1"), std::string::npos) << o.out << o.err;
    EXPECT_NE(o.out.find("shm 1"), std::string::npos) << o.out << o.err;
    EXPECT_NE(o.err.find("No space left on device"), std::string::npos) << o.err;
  }
  if (modes_run == 0) GTEST_SKIP() << "no sandbox mode works here";
}

// RLIMIT_DATA, where no cgroup holds the command's memory (LimitScope::kProcess, or
// no writable cgroup: cgroup_test.cc has the group's own): an allocation past the limit
// fails in the program (which may then end as it likes); 0 leaves it alone.
TEST(ProcessLimits, MemoryPastTheLimitCannotBeAllocated) {
  Command c = shell("python3 -c 'b = bytearray(400 << 20); print(len(b))'");
  c.limit_scope = LimitScope::kProcess;
  c.max_memory_bytes = 128u << 20;
  Outcome o = run(c);
  EXPECT_FALSE(o.ok()) << o.out;
  EXPECT_NE(o.err.find("MemoryError"), std::string::npos) << o.err;
  c.max_memory_bytes = 0;
  Outcome free_run = run(c);
  EXPECT_TRUE(free_run.ok()) << free_run.describe() << free_run.err;
  EXPECT_EQ(free_run.out, std::to_string(400u << 20) + "\n");
}

TEST(ProcessTest, ConcurrentRunsKeepTheirOwnOutput) {
  constexpr int kThreads = 8;
  std::vector<Outcome> outcomes(kThreads);
  std::vector<std::thread> threads;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([i, &outcomes] {
      Command command = shell("echo out-$TOKEN; sleep 0.2; echo err-$TOKEN >&2; exit $CODE");
      command.env = {{"TOKEN", std::to_string(i)}, {"CODE", std::to_string(i)}};
      outcomes[i] = run(command);
    });
  }
  for (auto& thread : threads) thread.join();
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (int i = 0; i < kThreads; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(outcomes[i].exit_code, i);
    EXPECT_EQ(outcomes[i].out, "out-" + std::to_string(i) + "\n");
    EXPECT_EQ(outcomes[i].err, "err-" + std::to_string(i) + "\n");
  }
  EXPECT_LT(elapsed, 1.5);  // they ran side by side, not one after another
}

// ---------------------------------------------------------------- describe and tail

TEST(ProcessTest, DescribeExplainsShellSignalExitCodes) {
  Outcome outcome;
  outcome.exit_code = 139;
  EXPECT_NE(outcome.describe().find("signal 11"), std::string::npos) << outcome.describe();
}

TEST(ProcessTest, TailKeepsTheEndOfBothStreams) {
  Outcome outcome;
  outcome.err = "error line\n";
  outcome.out = "output line\n";
  EXPECT_EQ(outcome.tail(), "error line\noutput line\n");

  outcome.err = std::string(100, 'e');
  outcome.out = std::string(100, 'o');
  std::string tail = outcome.tail(20);
  EXPECT_EQ(tail, std::string(10, 'e') + "\n" + std::string(9, 'o'));

  outcome.err = "";
  EXPECT_EQ(outcome.tail(20), std::string(20, 'o'));
  outcome.err = "short\n";
  EXPECT_EQ(outcome.tail(20), "short\n" + std::string(14, 'o'));
}

// ---------------------------------------------------------------- isolation

TEST(ProcessTest, IsolationNamesAreStable) {
  EXPECT_STREQ(isolation_name(Isolation::kBubblewrap), "bubblewrap");
  EXPECT_STREQ(isolation_name(Isolation::kNamespaces), "namespaces");
  EXPECT_STREQ(isolation_name(Isolation::kUnshare), "unshare");
  EXPECT_STREQ(isolation_name(Isolation::kNone), "none");
}

void skip_without_isolation() {
  if (available_isolation() == Isolation::kNone) {
    GTEST_SKIP() << "no isolation available on this machine";
  }
}

TEST(ProcessTest, IsolatedRunCutsTheNetwork) {
  skip_without_isolation();
  if (::testing::Test::IsSkipped()) return;
  // /proc/net/dev lists the interfaces of the reader's network namespace: in a fresh
  // one that is loopback only (/sys/class/net may still show the host's).
  Command command = shell("grep ':' /proc/net/dev | cut -d: -f1 | tr -d ' '");
  command.isolate = true;
  Outcome outcome = run(command);
  ASSERT_TRUE(outcome.ok()) << outcome.describe() << outcome.err;
  EXPECT_EQ(outcome.isolation, available_isolation());
  EXPECT_EQ(outcome.out, "lo\n");
}

TEST(ProcessTest, IsolatedRunKeepsExitCodeOutputAndEnvironment) {
  skip_without_isolation();
  if (::testing::Test::IsSkipped()) return;
  TempDir dir;
  writable_by_sandbox(dir);
  Command command = shell("pwd; echo $GREETING >&2; exit 4");
  command.isolate = true;
  command.cwd = dir.path().string();
  command.writable_paths = {dir.path().string()};
  command.env = {{"GREETING", "hello"}};
  Outcome outcome = run(command);
  EXPECT_EQ(outcome.exit_code, 4) << outcome.describe() << outcome.err;
  EXPECT_EQ(outcome.out, fs::canonical(dir.path()).string() + "\n");
  EXPECT_EQ(outcome.err, "hello\n");
}

TEST(ProcessTest, IsolatedProcessTreeDies) {
  skip_without_isolation();
  if (::testing::Test::IsSkipped()) return;
  TempDir dir;
  writable_by_sandbox(dir);
  std::string marker = (dir / "late").string();
  // Once after a normal exit, once after a timeout: a leftover child would create the
  // marker a second later.
  Command command = shell("(sleep 1; touch " + marker + ".exit) & echo done", 5);
  command.isolate = true;
  command.writable_paths = {dir.path().string()};
  Outcome exited = run(command);
  EXPECT_TRUE(exited.ok()) << exited.describe() << exited.err;
  EXPECT_LT(exited.wall_s, 1.0);

  command.shell = "(sleep 1; touch " + marker + ".timeout) & sleep 100";
  command.timeout_s = 0.3;
  Outcome timed_out = run(command);
  EXPECT_TRUE(timed_out.timed_out);
  EXPECT_LT(timed_out.wall_s, 1.0);

  std::this_thread::sleep_for(std::chrono::milliseconds(1300));
  EXPECT_FALSE(fs::exists(marker + ".exit"));
  EXPECT_FALSE(fs::exists(marker + ".timeout"));
}

void skip_without_bubblewrap() {
  if (available_isolation() != Isolation::kBubblewrap) {
    GTEST_SKIP() << "bubblewrap not available on this machine";
  }
}

TEST(ProcessTest, BubblewrapAllowsWritesOnlyToWritablePaths) {
  skip_without_bubblewrap();
  if (::testing::Test::IsSkipped()) return;
  TempDir writable;
  TempDir readonly;
  writable_by_sandbox(writable);
  readable_by_sandbox(readonly);
  Command command = shell("touch " + (readonly / "blocked").string() + "; echo $?; touch " +
                          (writable / "allowed").string() + "; echo $?");
  command.isolate = true;
  command.writable_paths = {writable.path().string()};
  Outcome outcome = run(command);
  ASSERT_TRUE(outcome.ok()) << outcome.describe() << outcome.err;
  EXPECT_EQ(outcome.out, "1\n0\n") << outcome.err;
  EXPECT_FALSE(fs::exists(readonly / "blocked"));
  EXPECT_TRUE(fs::exists(writable / "allowed"));
}

TEST(ProcessTest, BubblewrapGivesAPrivateTmpAndAReadOnlyWorkingDirectory) {
  skip_without_bubblewrap();
  if (::testing::Test::IsSkipped()) return;
  TempDir dir;
  testing::write_file(dir / "input.txt", "visible\n");
  readable_by_sandbox(dir);
  std::string scratch = "/tmp/maxcode-process-test-scratch-" + std::to_string(getpid());
  Command command = shell("cat input.txt; touch " + scratch + " && echo tmp-ok; touch new.txt");
  command.isolate = true;
  command.cwd = dir.path().string();
  Outcome outcome = run(command);
  EXPECT_NE(outcome.exit_code, 0);  // the last touch fails: the directory is read-only
  EXPECT_EQ(outcome.out, "visible\ntmp-ok\n") << outcome.err;
  EXPECT_FALSE(fs::exists(scratch));
  EXPECT_FALSE(fs::exists(dir / "new.txt"));
}

TEST(ProcessTest, BubblewrapRejectsMissingWritablePath) {
  skip_without_bubblewrap();
  if (::testing::Test::IsSkipped()) return;
  TempDir dir;
  Command command = shell("true");
  command.isolate = true;
  command.writable_paths = {(dir / "missing").string()};
  Outcome outcome = run(command);
  EXPECT_TRUE(outcome.spawn_failed);
  EXPECT_NE(outcome.spawn_error.find("missing"), std::string::npos) << outcome.spawn_error;
}

}  // namespace
}  // namespace maxcode

namespace maxcode {
namespace {

// The time of a run is the parent's clock around it: the command, its shell and what
// they start hold no descriptor but stdin, stdout and stderr (an old design passed clock
// readings through fd 3 of the sandbox's shell, where a benchmark found and forged them).
TEST(ProcessClock, TheParentTimesTheRunAndTheChildHoldsNoClockChannel) {
  for (bool isolate : {false, true}) {
    Command c;
    // The shell's descriptors, read by child processes (a glob would open one itself).
    c.shell = "sleep 0.2; for i in 3 4 5 6 7 8 9; do readlink /proc/$$/fd/$i; done; echo end";
    c.isolate = isolate;
    c.writable_paths = {"/tmp"};
    Outcome o = run(c);
    ASSERT_TRUE(o.ok()) << o.describe() << o.err;
    EXPECT_EQ(o.out, "end\n") << "isolate=" << isolate;
    EXPECT_GE(o.wall_s, 0.19);
  }
}

TEST(ProcessClock, ExitCodeIsKept) {
  Command c;
  c.shell = "exit 7";
  Outcome o = run(c);
  EXPECT_EQ(o.exit_code, 7);
  EXPECT_GE(o.wall_s, 0.0);
}

}  // namespace
}  // namespace maxcode

namespace maxcode {
namespace {

// /proc/self must be the command itself inside the sandbox: the CUDA driver reads it.
TEST(ProcessIsolation, ProcSelfIsTheCommandInsideTheSandbox) {
  if (available_isolation() == Isolation::kNone) GTEST_SKIP() << "no isolation available here";
  Command c;
  c.shell = "readlink /proc/self; echo $$";
  c.isolate = true;
  c.writable_paths = {"/tmp"};
  Outcome o = run(c);
  ASSERT_TRUE(o.ok()) << o.describe() << o.err;
  std::istringstream lines(o.out);
  std::string self, shell;
  lines >> self >> shell;
  EXPECT_FALSE(self.empty());
  EXPECT_NE(self, "") << o.out;
  EXPECT_LT(std::stoi(self), 100) << "a pid from the host's /proc: " << o.out;
}

}  // namespace
}  // namespace maxcode

namespace maxcode {
namespace {

// ---------------------------------------------------------------- environment

TEST(ProcessEnvironment, DroppingTheParentsEnvironmentLeavesOnlyWhatIsGiven) {
  setenv("MAXCODE_TEST_SECRET_TOKEN", "parent-secret-value", 1);
  Command c;
  c.shell = "env | sort";
  c.timeout_s = 10;
  c.parent_env = ParentEnv::kDrop;
  c.env = {{"PATH", "/usr/bin:/bin"}, {"ONLY", "this"}};
  Outcome o = run(c);
  ASSERT_TRUE(o.ok()) << o.describe() << o.err;
  // The shell adds PWD (and dash SHLVL-like nothing else); the parent's variables are gone.
  EXPECT_EQ(o.out.find("parent-secret-value"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("ONLY=this\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("PATH=/usr/bin:/bin\n"), std::string::npos) << o.out;
  unsetenv("MAXCODE_TEST_SECRET_TOKEN");
}

// ---------------------------------------------------------------- each sandbox mode

// The file-system modes this machine runs: bubblewrap where installed, namespaces where
// the kernel lets us (root, or unprivileged user namespaces).
std::vector<Isolation> file_system_modes() {
  std::vector<Isolation> modes;
  for (Isolation mode : {Isolation::kBubblewrap, Isolation::kNamespaces}) {
    Command probe;
    probe.shell = "true";
    probe.timeout_s = 10;
    probe.isolate = true;
    if (run_isolated(probe, mode).ok()) modes.push_back(mode);
  }
  return modes;
}

class SandboxModes : public ::testing::Test {
 protected:
  void SetUp() override {
    modes_ = file_system_modes();
    if (modes_.empty()) GTEST_SKIP() << "neither bubblewrap nor namespaces work on this machine";
  }
  std::vector<Isolation> modes_;
};

TEST_F(SandboxModes, NamespacesWorkHere) {
  // This machine (root, Linux >= 5.12) must run the mode the GPU runners rely on.
  EXPECT_NE(std::find(modes_.begin(), modes_.end(), Isolation::kNamespaces), modes_.end());
}

TEST_F(SandboxModes, WritesSucceedOnlyInTheWritablePaths) {
  TempDir workspace;
  TempDir outside;  // e.g. the source snapshot or the repository
  writable_by_sandbox(workspace);
  readable_by_sandbox(outside);
  const char* home_env = std::getenv("HOME");
  const std::string home = home_env && *home_env ? home_env : "/root";
  const std::string host_tmp = "/tmp/maxcode-sandbox-test-" + std::to_string(getpid());
  const std::string root_file = "/maxcode-sandbox-test-" + std::to_string(getpid());
  for (Isolation mode : modes_) {
    SCOPED_TRACE(isolation_name(mode));
    const std::vector<std::string> targets = {(outside / "blocked").string(), home + "/maxcode-sandbox-test",
                                              root_file, "/usr/maxcode-sandbox-test"};
    std::string script;
    for (const auto& target : targets) script += "echo x > " + target + " 2>/dev/null && echo wrote " + target + "; ";
    script += "echo x > " + host_tmp + " && echo private-tmp; echo x > allowed && echo workspace; "
              "echo x > /dev/null && echo dev-null; echo x > /dev/shm/maxcode-test && echo shm; "
              "mount -o remount,rw / 2>/dev/null; echo x > " + targets[0] + " 2>/dev/null && echo remounted; true";
    Command c;
    c.shell = script;
    c.timeout_s = 10;
    c.isolate = true;
    c.cwd = workspace.path().string();
    c.writable_paths = {workspace.path().string()};
    Outcome o = run_isolated(c, mode);
    ASSERT_TRUE(o.ok()) << o.describe() << o.err;
    EXPECT_EQ(o.isolation, mode);
    EXPECT_EQ(o.out, "private-tmp\nworkspace\ndev-null\nshm\n") << o.err;
    for (const auto& target : targets) EXPECT_FALSE(fs::exists(target)) << target;
    EXPECT_FALSE(fs::exists(host_tmp)) << "the sandbox's /tmp must be its own";
    EXPECT_TRUE(fs::exists(workspace / "allowed"));
    fs::remove(workspace / "allowed");
  }
}

TEST_F(SandboxModes, AWorkingDirectoryUnderTmpIsVisibleAndReadOnly) {
  TempDir dir;
  testing::write_file(dir / "input.txt", "visible\n");
  readable_by_sandbox(dir);
  for (Isolation mode : modes_) {
    SCOPED_TRACE(isolation_name(mode));
    Command c;
    c.shell = "cat input.txt; touch new.txt";
    c.timeout_s = 10;
    c.isolate = true;
    c.cwd = dir.path().string();
    Outcome o = run_isolated(c, mode);
    EXPECT_NE(o.exit_code, 0);
    EXPECT_EQ(o.out, "visible\n") << o.err;
    EXPECT_FALSE(fs::exists(dir / "new.txt"));
  }
}

// maxcode's injection libraries live in its work directory under /tmp, which the
// private /tmp hides: a readable path shows them, and the command cannot change them.
TEST_F(SandboxModes, AReadablePathUnderTmpIsShownReadOnly) {
  TempDir libs, workspace;
  testing::write_file(libs / "libinject.so", "library\n");
  readable_by_sandbox(libs);
  writable_by_sandbox(workspace);
  for (Isolation mode : modes_) {
    SCOPED_TRACE(isolation_name(mode));
    Command c;
    c.shell = "cat " + (libs / "libinject.so").string() + "; echo tampered > " + (libs / "libinject.so").string() +
              " 2>/dev/null && echo written; touch " + (workspace / "ok").string() + " && echo workspace";
    c.timeout_s = 10;
    c.isolate = true;
    c.writable_paths = {workspace.path().string()};
    c.readable_paths = {libs.path().string()};
    Outcome o = run_isolated(c, mode);
    EXPECT_EQ(o.out, "library\nworkspace\n") << o.err;
    EXPECT_EQ(testing::read_file(libs / "libinject.so"), "library\n");
  }
}

TEST_F(SandboxModes, NoNetworkOwnPidsAndExitStatusKept) {
  for (Isolation mode : modes_) {
    SCOPED_TRACE(isolation_name(mode));
    Command c;
    c.shell = "grep ':' /proc/net/dev | cut -d: -f1 | tr -d ' '; readlink /proc/self; exit 3";
    c.timeout_s = 10;
    c.isolate = true;
    Outcome o = run_isolated(c, mode);
    EXPECT_EQ(o.exit_code, 3) << o.describe() << o.err;
    std::istringstream lines(o.out);
    std::string interfaces, self;
    lines >> interfaces >> self;
    EXPECT_EQ(interfaces, "lo") << o.out;
    ASSERT_FALSE(self.empty()) << o.out;
    EXPECT_LT(std::stoi(self), 100) << "a pid from the host's /proc: " << o.out;
  }
}

// The sandbox's /proc: a process may write its own entries (the CUDA driver does, and
// every allocation fails on a read-only /proc), never the kernel's settings, and it holds
// no capability that could undo the sandbox. Not in the unshare fallback, which mounts
// /proc as it finds it and keeps root's capabilities.
TEST_F(SandboxModes, ProcIsWritableForTheProcessButNotForKernelSettings) {
  for (Isolation mode : modes_) {
    if (mode == Isolation::kUnshare) continue;
    SCOPED_TRACE(isolation_name(mode));
    Command c;
    c.shell =
        "printf maxcode-test > /proc/self/comm && echo own-ok; "
        "cat /proc/sys/kernel/hostname > /proc/sys/kernel/hostname 2>/dev/null && echo sys-written; "
        "echo 0 > /proc/sysrq-trigger 2>/dev/null && echo sysrq-written; "
        "grep CapEff /proc/self/status | tr -d ' \\t'; mount -o remount,rw / 2>/dev/null && echo remounted; true";
    c.timeout_s = 10;
    c.isolate = true;
    Outcome o = run_isolated(c, mode);
    ASSERT_TRUE(o.ok()) << o.describe() << o.err;
    EXPECT_EQ(o.out, "own-ok\nCapEff:0000000000000000\n") << o.err;
  }
}

TEST_F(SandboxModes, KeyFilesAreHidden) {
  // Outside /tmp, where the private /tmp would hide it anyway.
  const fs::path key = "/var/tmp/maxcode-process-test-" + std::to_string(getpid()) + ".pem";
  testing::write_file(key, "MIIEsecret-key-line-for-the-sandbox-test\n");
  setenv("MAXCODE_TEST_APP_KEY_FILE", key.c_str(), 1);
  add_secret_variables({"MAXCODE_TEST_APP_KEY_FILE"});
  for (Isolation mode : modes_) {
    SCOPED_TRACE(isolation_name(mode));
    Command c;
    c.shell = "cat " + key.string() + " 2>/dev/null; echo end";
    c.timeout_s = 10;
    c.isolate = true;
    Outcome o = run_isolated(c, mode);
    EXPECT_EQ(o.out, "end\n") << o.err;
  }
  Command plain;
  plain.shell = "cat " + key.string();
  EXPECT_NE(run(plain).out.find("MIIEsecret"), std::string::npos) << "readable outside the sandbox";
  unsetenv("MAXCODE_TEST_APP_KEY_FILE");
  fs::remove(key);
}

// ---------------------------------------------------------------- the sandbox's root (issue 22)

// A Unix socket of the host that a test listens on: at a path, or abstract ("@name").
class HostSocket {
 public:
  explicit HostSocket(const std::string& name) : name_(name) {
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    socklen_t length = sizeof address;
    if (name[0] == '@') {
      std::memcpy(address.sun_path + 1, name.data() + 1, name.size() - 1);
      length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
    } else {
      std::memcpy(address.sun_path, name.data(), std::min(name.size(), sizeof address.sun_path - 1));
    }
    listening_ = fd_ >= 0 && bind(fd_, reinterpret_cast<sockaddr*>(&address), length) == 0 && listen(fd_, 16) == 0;
    if (listening_ && name[0] != '@') chmod(name.c_str(), 0777);  // anyone may connect, as /run's do
  }
  ~HostSocket() {
    if (fd_ >= 0) close(fd_);
    if (name_[0] != '@') unlink(name_.c_str());
  }
  bool listening() const { return listening_; }
  // Connections that arrived since the last call.
  int accepted() {
    int count = 0;
    for (int client; (client = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC)) >= 0; ++count) close(client);
    return count;
  }

 private:
  std::string name_;
  int fd_ = -1;
  bool listening_ = false;
};

// A program that connects to each socket named on its command line and writes to it.
std::string build_connector(const TempDir& dir) {
  testing::write_file(dir / "connect.c", R"C(
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    const char* name = argv[i];
    socklen_t length = sizeof a;
    if (name[0] == '@') {
      memcpy(a.sun_path + 1, name + 1, strlen(name + 1));
      length = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(name));
    } else {
      strncpy(a.sun_path, name, sizeof a.sun_path - 1);
    }
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (connect(fd, (struct sockaddr*)&a, length) == 0 && write(fd, "hello", 5) == 5)
      printf("connected %s\n", name);
    else
      printf("refused %s\n", name);
    close(fd);
  }
  return 0;
}
)C");
  Command cc = shell("cc -o connect connect.c");
  cc.cwd = dir.path().string();
  Outcome built = run(cc);
  return built.ok() ? (dir / "connect").string() : "";
}

TEST_F(SandboxModes, NoUnixSocketOfTheHostIsReachable) {
  TempDir tools;
  readable_by_sandbox(tools);
  const std::string connector = build_connector(tools);
  if (connector.empty()) GTEST_SKIP() << "no C compiler to build the connecting program";
  const std::string tag = "maxcode-socket-test-" + std::to_string(getpid());
  // Outside /tmp, where the private /tmp would hide it anyway: /var/tmp, and /run
  // (where the host's daemons listen) when the test may write there.
  const fs::path dir = fs::path("/var/tmp") / tag;
  fs::create_directories(dir);
  std::vector<std::unique_ptr<HostSocket>> sockets;
  std::vector<std::string> names = {(dir / "s").string(), "@" + tag};
  if (access("/run", W_OK) == 0) names.push_back("/run/" + tag + ".sock");
  std::string args;
  std::string refused_all, connected_all;
  for (const auto& name : names) {
    sockets.push_back(std::make_unique<HostSocket>(name));
    ASSERT_TRUE(sockets.back()->listening()) << name;
    args += " " + shell_quote(name);
    refused_all += "refused " + name + "\n";
    connected_all += "connected " + name + "\n";
  }
  // Unsandboxed, the program reaches every one: the test proves something.
  Outcome plain = run(shell(shell_quote(connector) + args));
  EXPECT_EQ(plain.out, connected_all) << plain.err;
  for (auto& socket : sockets) EXPECT_EQ(socket->accepted(), 1);

  for (Isolation mode : modes_) {
    SCOPED_TRACE(isolation_name(mode));
    Command c = shell(shell_quote(connector) + args);
    c.isolate = true;
    c.readable_paths = {tools.path().string()};
    Outcome o = run_isolated(c, mode);
    ASSERT_TRUE(o.ok()) << o.describe() << o.err;
    EXPECT_EQ(o.out, refused_all) << o.err;
    for (auto& socket : sockets) EXPECT_EQ(socket->accepted(), 0);
  }
  sockets.clear();
  fs::remove_all(dir);
}

TEST_F(SandboxModes, TheRootShowsTheSystemAndWhatTheCommandNeedsOnly) {
  TempDir workspace, declared;
  writable_by_sandbox(workspace);
  readable_by_sandbox(declared);
  testing::write_file(declared / "sdk.txt", "declared\n");
  // A credential outside every path the command needs.
  const fs::path secret_dir = "/var/tmp/maxcode-credential-test-" + std::to_string(getpid());
  fs::create_directories(secret_dir);
  testing::write_file(secret_dir / "credential", "MAXCODE-TEST-CREDENTIAL-7f3a\n");
  fs::permissions(secret_dir / "credential", fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  for (Isolation mode : modes_) {
    SCOPED_TRACE(isolation_name(mode));
    Command c = shell(
        "ls / | tr '\\n' ' '; echo; cat " + (declared / "sdk.txt").string() + "; cat " +
        (secret_dir / "credential").string() + " 2>/dev/null; cat /etc/shadow /etc/gshadow 2>/dev/null; "
        "ls -A /etc/ssl/private 2>/dev/null; ls -A /dev | tr '\\n' ' '; echo; test -x /usr/bin/env && echo toolchain");
    c.isolate = true;
    c.cwd = workspace.path().string();
    c.writable_paths = {workspace.path().string()};
    c.readable_paths = {declared.path().string()};
    Outcome o = run_isolated(c, mode);
    ASSERT_TRUE(o.ok()) << o.describe() << o.err;
    std::istringstream lines(o.out);
    std::string root, sdk, dev, toolchain;
    std::getline(lines, root);
    std::getline(lines, sdk);
    std::getline(lines, dev);
    std::getline(lines, toolchain);
    std::set<std::string> entries;
    std::istringstream words(root);
    for (std::string word; words >> word;) entries.insert(word);
    for (const char* hidden : {"run", "var", "home", "root", "srv", "mnt", "work", "media", "boot"})
      EXPECT_EQ(entries.count(hidden), 0u) << "/" << hidden << " is visible: " << root;
    for (const char* shown : {"usr", "etc", "tmp", "dev", "proc"})
      EXPECT_EQ(entries.count(shown), 1u) << "/" << shown << " is missing: " << root;
    EXPECT_EQ(sdk, "declared");
    EXPECT_EQ(toolchain, "toolchain") << o.out;
    EXPECT_EQ(o.out.find("MAXCODE-TEST-CREDENTIAL"), std::string::npos) << o.out;
    EXPECT_EQ(o.out.find("root:"), std::string::npos) << "a password file was read: " << o.out;
    // /dev holds the harmless nodes (and the GPU's), not the host's disks or /dev/log.
    EXPECT_NE(dev.find("null"), std::string::npos) << dev;
    EXPECT_EQ(dev.find("vda"), std::string::npos) << dev;
    EXPECT_EQ(dev.find("log"), std::string::npos) << dev;
  }
  fs::remove_all(secret_dir);
}

// Issue 22: run as root, a candidate read /etc/shadow. The command runs as "nobody",
// which cannot read what only root may, even where the sandbox shows it.
TEST_F(SandboxModes, CommandsNeverRunAsRoot) {
  if (!sandbox_drops_root()) GTEST_SKIP() << "maxcode does not run as root here";
  TempDir workspace, shown;
  writable_by_sandbox(workspace);
  readable_by_sandbox(shown);
  testing::write_file(shown / "root-only", "MAXCODE-ROOT-ONLY\n");
  fs::permissions(shown / "root-only", fs::perms::owner_read | fs::perms::owner_write);
  for (Isolation mode : modes_) {
    SCOPED_TRACE(isolation_name(mode));
    Command c = shell("id -u; id -g; cat " + (shown / "root-only").string() +
                      " 2>/dev/null; cat /etc/shadow 2>/dev/null | head -c 100; "
                      "echo x > written && echo workspace; grep CapEff /proc/self/status | tr -d ' \\t'");
    c.isolate = true;
    c.cwd = workspace.path().string();
    c.writable_paths = {workspace.path().string()};
    c.readable_paths = {shown.path().string()};
    Outcome o = run_isolated(c, mode);
    ASSERT_TRUE(o.ok()) << o.describe() << o.err;
    EXPECT_EQ(o.out, "65534\n65534\nworkspace\nCapEff:0000000000000000\n") << o.err;
    fs::remove(workspace / "written");
  }
}

// maxcode's run directory is a mkdtemp folder (0700, root's) and the workspace a folder
// in it: bubblewrap made that parent in the sandbox with the host's mode, so the
// sandbox's user could not reach its own workspace ("The source directory ... does not
// exist" from every build in the suite).
TEST_F(SandboxModes, AWorkspaceInsideAPrivateFolderIsReachable) {
  TempDir run_dir;  // 0700, as mkdtemp makes it
  const fs::path workspace = run_dir / "ws-1-baseline";
  fs::create_directories(workspace / "src");
  testing::write_file(workspace / "src" / "a.c", "int a;\n");
  hand_to_sandbox_user(workspace.string());
  for (Isolation mode : modes_) {
    SCOPED_TRACE(isolation_name(mode));
    Command c = shell("cd " + workspace.string() + " && test -d " + workspace.string() +
                      " && cat src/a.c && echo built > out && cat out");
    c.isolate = true;
    c.cwd = workspace.string();
    c.writable_paths = {workspace.string()};
    Outcome o = run_isolated(c, mode);
    ASSERT_TRUE(o.ok()) << o.describe() << o.err;
    EXPECT_EQ(o.out, "int a;\nbuilt\n") << o.err;
  }
}

TEST(ProcessNamespaces, SignalsTimeoutsAndTheClockPassThroughTheSandbox) {
  Command probe;
  probe.shell = "true";
  probe.isolate = true;
  if (!run_isolated(probe, Isolation::kNamespaces).ok()) GTEST_SKIP() << "namespaces do not work here";

  Command crash;
  crash.shell = "kill -SEGV $$";
  crash.isolate = true;
  Outcome crashed = run_isolated(crash, Isolation::kNamespaces);
  // As under bubblewrap: the sandbox's pid 1 reports the command's signal N as 128 + N.
  EXPECT_EQ(crashed.exit_code, 128 + SIGSEGV) << crashed.describe();
  EXPECT_NE(crashed.describe().find("signal 11"), std::string::npos) << crashed.describe();

  TempDir dir;
  writable_by_sandbox(dir);
  Command late;
  late.shell = "(sleep 1; touch " + (dir / "late").string() + ") & sleep 100";
  late.timeout_s = 0.3;
  late.isolate = true;
  late.writable_paths = {dir.path().string()};
  Outcome timed_out = run_isolated(late, Isolation::kNamespaces);
  EXPECT_TRUE(timed_out.timed_out);
  EXPECT_LT(timed_out.wall_s, 1.0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1300));
  EXPECT_FALSE(fs::exists(dir / "late"));

  Command timed;
  timed.shell = "sleep 0.2";
  timed.isolate = true;
  Outcome o = run_isolated(timed, Isolation::kNamespaces);
  ASSERT_TRUE(o.ok()) << o.describe() << o.err;
  EXPECT_GE(o.wall_s, 0.19);
}

}  // namespace
}  // namespace maxcode
