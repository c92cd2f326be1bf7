// The profiler socket: summaries sent as lines by each process, the final one standing,
// and whatever would rewrite or forge a process's report after it reported caught.
// Clients here are plain sockets, and a sandboxed process (no GPU on this machine).
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "runner/evaluate/gpu/kernel_time.h"
#include "runner/evaluate/gpu/record_socket.h"
#include "runner/util/process.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;

int connect_to(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strcpy(address.sun_path, path.c_str());
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  EXPECT_EQ(connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0) << std::strerror(errno);
  return fd;
}

void send_text(int fd, const std::string& text) {
  EXPECT_EQ(send(fd, text.data(), text.size(), MSG_NOSIGNAL), static_cast<ssize_t>(text.size()));
}

std::string summary_line(long pid, std::uint64_t kernel_ns, bool complete) {
  GpuActivity a;
  KernelLaunch k;
  k.name = "_Z4realPf";
  k.start_ns = 1000;
  k.end_ns = 1000 + kernel_ns;
  a.add_kernel(k);
  return to_json(a.summary(pid, "/work/bench", complete)).dump() + "\n";
}

TEST(RecordSocket, EachProcessReportsOnceAndItsFinalSummaryStands) {
  RecordSocket socket;
  EXPECT_LT(socket.path().size(), sizeof(sockaddr_un::sun_path));
  EXPECT_TRUE(fs::is_socket(socket.path()));
  const int a = connect_to(socket.path()), b = connect_to(socket.path());
  send_text(a, summary_line(1, 100, false));  // a snapshot while running
  send_text(a, summary_line(1, 900, true));
  // A summary split across writes is one line.
  const std::string line = summary_line(2, 300, true);
  send_text(b, line.substr(0, 10));
  send_text(b, line.substr(10));
  close(a);
  close(b);
  const RecordStreams streams = socket.finish();
  EXPECT_TRUE(streams.problems.empty()) << streams.problems.front();
  ASSERT_EQ(streams.summaries.size(), 2u);
  RunKernels run;
  for (const GpuSummary& s : streams.summaries) add_summary(run, s);
  EXPECT_EQ(run.processes(), 2);
  EXPECT_TRUE(run.complete);
  EXPECT_EQ(run.kernels.at("_Z4realPf").total_ns, 1200u);
  // The socket and its directory are gone with the run.
  EXPECT_FALSE(fs::exists(socket.dir()));
}

TEST(RecordSocket, AProcessThatNeverFinishedLeavesItsLastSnapshot) {
  RecordSocket socket;
  const int a = connect_to(socket.path());
  send_text(a, summary_line(1, 100, false));
  close(a);
  const RecordStreams streams = socket.finish();
  EXPECT_TRUE(streams.problems.empty());
  ASSERT_EQ(streams.summaries.size(), 1u);
  EXPECT_FALSE(streams.summaries[0].complete);
}

TEST(RecordSocket, RecordsSentAfterTheFinalSummaryAreTampering) {
  // The file-rewriting cheat, on a socket: code that runs after the injection's report
  // and sends its own, with the durations divided by 3.
  RecordSocket socket;
  const int a = connect_to(socket.path());
  send_text(a, summary_line(1, 900, true));
  send_text(a, summary_line(1, 300, true));
  close(a);
  const RecordStreams streams = socket.finish();
  ASSERT_EQ(streams.problems.size(), 1u);
  EXPECT_EQ(streams.problems[0],
            "GPU records were sent on a process's channel after its final summary (code of the benchmark wrote to "
            "maxcode's profiler socket)");
  ASSERT_EQ(streams.summaries.size(), 1u);
  EXPECT_EQ(streams.summaries[0].kernels.at(0).total_ns, 900u);  // the first final summary stands
}

TEST(RecordSocket, GarbageAndCutShortSummariesAreReported) {
  RecordSocket socket;
  const int a = connect_to(socket.path()), b = connect_to(socket.path());
  send_text(a, "{\"format\": \"maxcode-gpu/1\"}\n");
  const std::string line = summary_line(2, 300, true);
  send_text(b, line.substr(0, line.size() / 2));
  close(a);
  close(b);
  const RecordStreams streams = socket.finish();
  ASSERT_EQ(streams.problems.size(), 2u);
  EXPECT_EQ(streams.problems[0],
            "a line on maxcode's profiler socket is not a GPU summary (the channel was written to by the "
            "benchmark?): profiler socket: pid: missing required field");
  EXPECT_EQ(streams.problems[1], "a process's GPU summary on maxcode's profiler socket was cut short");
}

TEST(RecordSocket, ASandboxedProcessReachesTheSocketButCannotReplaceIt) {
  Command probe;
  probe.shell = "command -v python3";
  if (!run(probe).ok()) GTEST_SKIP() << "python3 is needed for a client inside the sandbox";
  bool isolated = false;
  for (Isolation mode : {Isolation::kNamespaces, Isolation::kBubblewrap}) {
    testing::TempDir workspace;
    RecordSocket socket;
    Command c;
    // As the injection in a benchmark would: connect and send; then try what a cheat
    // would: replace the socket, or add a file beside it.
    c.shell = "python3 -c \"import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); "
              "s.sendall(sys.stdin.buffer.read())\" " + shell_quote(socket.path()) +
              " && echo sent; rm -f " + shell_quote(socket.path()) + " 2>/dev/null && echo removed; touch " +
              shell_quote(socket.dir() + "/x") + " 2>/dev/null && echo wrote; true";
    c.stdin_data = summary_line(7, 500, true);
    c.timeout_s = 20;
    c.isolate = true;
    c.cwd = workspace.path().string();
    c.writable_paths = {workspace.path().string()};
    c.readable_paths = {socket.dir()};
    Outcome o = run_isolated(c, mode);
    if (o.isolation != mode || o.spawn_failed || o.err.find("bwrap") != std::string::npos) continue;
    isolated = true;
    SCOPED_TRACE(isolation_name(mode));
    EXPECT_EQ(o.out, "sent\n") << o.err;
    const RecordStreams streams = socket.finish();
    EXPECT_TRUE(streams.problems.empty());
    ASSERT_EQ(streams.summaries.size(), 1u);
    EXPECT_EQ(streams.summaries[0].pid, 7);
  }
  if (!isolated) GTEST_SKIP() << "no sandbox works here";
}

}  // namespace
}  // namespace maxcode
