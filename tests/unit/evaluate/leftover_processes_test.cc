// Processes left running by a command: found in every sandbox with a pid namespace,
// whatever the command does to hide them (setsid, a double fork), and dead afterwards.
#include "runner/evaluate/leftover_processes.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/test_support.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;

std::vector<Isolation> pid_namespace_modes() {
  std::vector<Isolation> modes;
  for (Isolation mode : {Isolation::kBubblewrap, Isolation::kNamespaces, Isolation::kUnshare}) {
    Command probe;
    probe.shell = "true";
    probe.timeout_s = 10;
    probe.isolate = true;
    if (run_isolated(probe, mode).ok()) modes.push_back(mode);
  }
  return modes;
}

// Whether any process on this machine has `marker` in its command line.
bool running_with(const std::string& marker) {
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline;
    try {  // a process that ends while read throws
      std::ifstream in(entry.path() / "cmdline", std::ios::binary);
      cmdline.assign(std::istreambuf_iterator<char>(in), {});
    } catch (const std::exception&) {
      continue;
    }
    for (char& c : cmdline)
      if (c == '\0') c = ' ';
    if (cmdline.find(marker) != std::string::npos) return true;
  }
  return false;
}

class LeftoverProcesses : public ::testing::Test {
 protected:
  void SetUp() override {
    modes_ = pid_namespace_modes();
    if (modes_.empty()) GTEST_SKIP() << "no sandbox with a pid namespace works on this machine";
  }
  static Outcome run_watched(const std::string& shell, Isolation mode) {
    Command c;
    c.shell = watch_for_leftovers(shell);
    c.timeout_s = 20;
    c.isolate = true;
    return run_isolated(c, mode);
  }
  std::vector<Isolation> modes_;
};

TEST_F(LeftoverProcesses, ADaemonIsFoundAndDiesWithTheSandbox) {
  for (Isolation mode : modes_) {
    {
      SCOPED_TRACE(isolation_name(mode));
      // setsid and a double fork: the daemon leaves the process group and its parent.
      Outcome o = run_watched("setsid sh -c '(exec sleep 73.5) &' </dev/null >/dev/null 2>&1; echo done; exit 3", mode);
      std::string left = take_leftovers(o);
      // "pid 5 (sleep)", or "(sh)" when the daemon had not reached its exec yet.
      EXPECT_EQ(left.rfind("pid ", 0), 0u) << left << "\n" << o.describe() << "\n" << o.err;
      EXPECT_EQ(o.exit_code, 3) << "the command's own exit code comes back";
      EXPECT_EQ(o.out, "done\n");
      EXPECT_EQ(o.err.find("[maxcode"), std::string::npos) << o.err;
      EXPECT_FALSE(running_with("sleep 73.5")) << "the daemon outlived its sandbox";
    }
  }
}

TEST_F(LeftoverProcesses, ACommandThatWaitsForItsChildrenLeavesNothing) {
  for (Isolation mode : modes_) {
    {
      SCOPED_TRACE(isolation_name(mode));
      Outcome o = run_watched("sleep 0.1 & sleep 0.1 | cat; wait; echo ok; exec true", mode);
      EXPECT_EQ(take_leftovers(o), "") << o.err;
      EXPECT_TRUE(o.ok()) << o.describe() << o.err;
      EXPECT_EQ(o.out, "ok\n");
    }
  }
}

TEST_F(LeftoverProcesses, OwnExitCodesAndReportLinesDoNotCount) {
  for (Isolation mode : modes_) {
    SCOPED_TRACE(isolation_name(mode));
    // The wrapper's exit code from the command itself, with no process left: a failure
    // of its own, not a leftover.
    Outcome o = run_watched("exit 212", mode);
    EXPECT_EQ(take_leftovers(o), "");
    EXPECT_EQ(o.exit_code, 212);
    // A forged report line without the wrapper's exit code changes nothing either.
    o = run_watched("printf '\\n[maxcode: left running] 0: pid 9 (x)\\n' >&2; exit 0", mode);
    EXPECT_EQ(take_leftovers(o), "");
    EXPECT_TRUE(o.ok());
  }
}

TEST(LeftoverProcessesWithoutSandbox, OnlyPidNamespacesAreWatched) {
  EXPECT_FALSE(can_watch_for_leftovers(Isolation::kNone));
  EXPECT_TRUE(can_watch_for_leftovers(Isolation::kBubblewrap));
  EXPECT_TRUE(can_watch_for_leftovers(Isolation::kNamespaces));
  EXPECT_TRUE(can_watch_for_leftovers(Isolation::kUnshare));
  Outcome o;
  o.exit_code = 1;
  o.err = "plain failure\n";
  EXPECT_EQ(take_leftovers(o), "");
  EXPECT_EQ(o.err, "plain failure\n");
}

}  // namespace
}  // namespace maxcode
