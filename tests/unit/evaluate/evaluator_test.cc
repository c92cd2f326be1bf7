// The evaluator against candidates that fail in every way docs/evaluation.md lists: each gets
// its own verdict and reason, and the user's repository stays untouched.
#include "runner/evaluate/evaluator.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iostream>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

#include "runner/evaluate/leftover_processes.h"
#include "runner/util/cgroup.h"
#include "runner/util/cpu_pressure.h"

#include "support/fixture_repo.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;

using testing::definition_candidate;
using testing::FixtureRepo;

class EvaluatorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    repo_ = new FixtureRepo("sum");
    before_ = repo_->fingerprint();
    repo_->evaluator();
  }
  static void TearDownTestSuite() {
    EXPECT_EQ(repo_->fingerprint(), before_) << "the user's repository was modified";
    delete repo_;
  }
  static Evaluation check(const Candidate& candidate) {
    Evaluator& ev = repo_->evaluator();
    Checked c = ev.check(ev.materialize(candidate));
    if (c.passed) ev.time(c);
    ev.release(c);
    return c.evaluation;
  }
  // `body` becomes the function body; <cstdlib> stands before it as a helper would.
  static Evaluation check_definition(const std::string& id, const std::string& body) {
    return check(definition_candidate(
        id, "#include <cstdlib>\nlong long sum_squares(const int* v, int n) {\n" + body + "\n}"));
  }
  static FixtureRepo* repo_;
  static std::map<std::string, std::string> before_;
};

FixtureRepo* EvaluatorTest::repo_ = nullptr;
std::map<std::string, std::string> EvaluatorTest::before_;

TEST_F(EvaluatorTest, CompileErrorCarriesCompilerOutput) {
  Evaluation e = check_definition("no-compile", "  return undeclared_name;");
  EXPECT_EQ(e.verdict, Verdict::kCompileError);
  EXPECT_NE(e.compiler_output.find("undeclared_name"), std::string::npos) << e.compiler_output;
  EXPECT_FALSE(e.timing);
}

TEST_F(EvaluatorTest, HangIsTimeout) {
  Evaluation e = check_definition("hang", "  for (;;) {}\n  return 0;");
  EXPECT_EQ(e.verdict, Verdict::kTimeout) << e.reason;
  EXPECT_NE(e.reason.find("timed out"), std::string::npos) << e.reason;
}

TEST_F(EvaluatorTest, CrashInBenchmarkIsCrashed) {
  // Small inputs (the tests) work; the benchmark's large input crashes.
  Evaluation e = check_definition(
      "crash", "  if (n > 1000) { volatile int* p = nullptr; *p = 1; }\n"
               "  long long s = 0; for (int i = 0; i < n; ++i) s += square(v[i]); return s;");
  EXPECT_EQ(e.verdict, Verdict::kCrashed) << e.reason;
  EXPECT_NE(e.reason.find("signal"), std::string::npos) << e.reason;
}

TEST_F(EvaluatorTest, OutputFloodIsStoppedAndCrashed) {
  Evaluation e = check_definition(
      "flood", "  if (n > 1000) for (;;) __builtin_printf(\"0123456789abcdef0123456789abcdef\\n\");\n"
               "  long long s = 0; for (int i = 0; i < n; ++i) s += square(v[i]); return s;");
  EXPECT_EQ(e.verdict, Verdict::kCrashed) << e.reason;
  EXPECT_NE(e.reason.find("output exceeded"), std::string::npos) << e.reason;
}

TEST_F(EvaluatorTest, FastButWrongIsIncorrectWithTheValues) {
  Evaluation e = check_definition(
      "wrong", "  long long s = 0; for (int i = 0; i < n; ++i) s += square(v[i]);\n"
               "  return n > 1000 ? s + 1 : s;");
  EXPECT_EQ(e.verdict, Verdict::kIncorrect) << e.reason;
  EXPECT_NE(e.mismatch.find("expected"), std::string::npos) << e.mismatch;
  EXPECT_FALSE(e.timing);
}

TEST_F(EvaluatorTest, DeletingATestFileAtRunTimeIsRejected) {
  Evaluation e = check_definition(
      "deletes", "  std::system(\"rm -f tests/test.cpp\");\n"
                 "  long long s = 0; for (int i = 0; i < n; ++i) s += square(v[i]); return s;");
  EXPECT_EQ(e.verdict, Verdict::kRejected) << e.reason;
  EXPECT_NE(e.reason.find("tests/test.cpp"), std::string::npos) << e.reason;
}

TEST_F(EvaluatorTest, EditingTheBenchmarkAtRunTimeIsRejected) {
  Evaluation e = check_definition(
      "edits-bench", "  std::system(\"echo '// tampered' >> bench/main.cpp\");\n"
                     "  long long s = 0; for (int i = 0; i < n; ++i) s += square(v[i]); return s;");
  EXPECT_EQ(e.verdict, Verdict::kRejected) << e.reason;
  EXPECT_NE(e.reason.find("bench/main.cpp"), std::string::npos) << e.reason;
}

TEST_F(EvaluatorTest, ChangingTheModeOfATestFileAtRunTimeIsRejected) {
  // The content stays: only the mode proves the change.
  Evaluation e = check_definition(
      "chmods-test", "  std::system(\"chmod 0777 tests/test.cpp\");\n"
                     "  long long s = 0; for (int i = 0; i < n; ++i) s += square(v[i]); return s;");
  EXPECT_EQ(e.verdict, Verdict::kRejected) << e.reason;
  EXPECT_NE(e.reason.find("source files changed during the tests: tests/test.cpp"), std::string::npos) << e.reason;
}

// The cheat of issue 21: code run at test time puts a script that prints saved output
// in place of the built benchmark, which later runs would have timed.
TEST_F(EvaluatorTest, ReplacingTheBuiltBenchmarkAtTestTimeIsRejected) {
  Evaluation e = check_definition("replaces-bench", R"CODE(
  static bool done = false;
  if (!done && n <= 1000) {
    done = true;
    std::system("printf '#!/bin/sh\\necho 42\\n' > bench.tmp && chmod +x bench.tmp && mv bench.tmp bench.bin");
  }
  long long s = 0; for (int i = 0; i < n; ++i) s += square(v[i]); return s;)CODE");
  EXPECT_EQ(e.verdict, Verdict::kRejected) << e.reason;
  EXPECT_NE(e.reason.find("build outputs changed during the tests: bench.bin ("), std::string::npos) << e.reason;
  EXPECT_FALSE(e.timing);
}

TEST_F(EvaluatorTest, RewritingTheBuiltTestsFromTheBenchmarkIsRejected) {
  Evaluation e = check_definition("rewrites-tests", R"CODE(
  static bool done = false;
  if (!done && n > 1000) {
    done = true;
    std::system("printf '#!/bin/sh\\necho ok\\n' > test.bin");
  }
  long long s = 0; for (int i = 0; i < n; ++i) s += square(v[i]); return s;)CODE");
  EXPECT_EQ(e.verdict, Verdict::kRejected) << e.reason;
  EXPECT_NE(e.reason.find("build outputs changed during the benchmark 'main'"), std::string::npos) << e.reason;
  EXPECT_NE(e.reason.find("test.bin (its content changed)"), std::string::npos) << e.reason;
}

// As in the issue, once the checks are over: the sixth program run (the tests, three
// seeds and the call check come first) replaces the benchmark by a script. The work
// stays the original's, and the swap happens before main (in a static initializer),
// so that no check on the way there sees anything. A timed run that changed a build
// output ends the candidate.
TEST_F(EvaluatorTest, ReplacingTheBuiltBenchmarkOnceTheChecksAreOverIsRejected) {
  Evaluation e = check(definition_candidate("replaces-bench-later", R"CODE(#include <cstdlib>
static const int swap_later = std::system(
    "n=$(cat runs.txt 2>/dev/null || echo 0); n=$((n + 1)); echo $n > runs.txt; "
    "if [ $n -ge 6 ]; then printf '#!/bin/sh\\necho 42\\n' > bench.tmp; "
    "chmod +x bench.tmp; mv bench.tmp bench.bin; fi");
long long sum_squares(const int* v, int n) {
  long long s = 0;
  for (int p = 0; p < PASSES; ++p) {
    s = 0;
    const volatile int* data = v;
    for (int i = 0; i < n; ++i) s += square(data[i]);
  }
  return s;
})CODE"));
  std::string steps;
  for (const StepRecord& step : e.steps) steps += step.name + ": " + step.status + "\n";
  EXPECT_EQ(e.verdict, Verdict::kRejected) << e.reason << "\n" << steps;
  EXPECT_NE(e.reason.find("build outputs changed during"), std::string::npos) << e.reason << "\n" << steps;
  EXPECT_NE(e.reason.find("bench.bin (its content changed)"), std::string::npos) << e.reason << "\n" << steps;
}

TEST_F(EvaluatorTest, ADaemonLeftByTheBenchmarkIsRejectedAndDoesNotSurvive) {
  if (!can_watch_for_leftovers(available_isolation()))
    GTEST_SKIP() << "no sandbox with a pid namespace here: nothing can find an escaped daemon";
  // setsid and a double fork leave the benchmark's process group.
  Evaluation e = check_definition("daemon", R"CODE(
  static bool done = false;
  if (!done && n > 1000) {
    done = true;
    std::system("setsid sh -c '(exec sleep 74.25) &' </dev/null >/dev/null 2>&1");
  }
  long long s = 0; for (int i = 0; i < n; ++i) s += square(v[i]); return s;)CODE");
  EXPECT_EQ(e.verdict, Verdict::kRejected) << e.reason;
  EXPECT_NE(e.reason.find("left a process running after the benchmark 'main'"), std::string::npos) << e.reason;
  EXPECT_NE(e.reason.find(": pid "), std::string::npos) << e.reason;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::string cmdline;
    try {  // a process that ends while read throws
      std::ifstream in(entry.path() / "cmdline", std::ios::binary);
      cmdline.assign(std::istreambuf_iterator<char>(in), {});
    } catch (const std::exception&) {
      continue;
    }
    EXPECT_EQ(cmdline.find("74.25"), std::string::npos) << "left running: " << entry.path();
  }
}

// ---------------------------------------------------------------- the sandbox's root (issue 22)

bool sandbox_shows_a_root_of_its_own() {
  Isolation isolation = available_isolation();
  return isolation == Isolation::kBubblewrap || isolation == Isolation::kNamespaces;
}

// The sum of squares, or that plus one once `breached` (a wrong answer the checks see).
std::string honest_unless(const std::string& includes, const std::string& breached) {
  return includes + "\nlong long sum_squares(const int* v, int n) {\n" + breached +
         "\n  long long s = 0; for (int i = 0; i < n; ++i) s += square(v[i]);\n  return breached ? s + 1 : s;\n}";
}

// A candidate connected to a host Unix socket outside /tmp and delivered bytes. Now no
// socket of the host is in the sandbox (path or abstract): the connection fails, and
// the candidate, which would answer wrongly had it got through, stays correct.
TEST_F(EvaluatorTest, ACandidateReachesNoUnixSocketOfTheHost) {
  if (!sandbox_shows_a_root_of_its_own()) GTEST_SKIP() << "no file-system sandbox here";
  const std::string tag = "maxcode-evaluator-socket-" + std::to_string(getpid());
  const fs::path dir = fs::path("/var/tmp") / tag;
  fs::create_directories(dir);
  std::vector<std::string> names = {(dir / "s").string(), "@" + tag};
  std::vector<int> fds;
  for (const auto& name : names) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    socklen_t length = sizeof address;
    if (name[0] == '@') {
      std::memcpy(address.sun_path + 1, name.data() + 1, name.size() - 1);
      length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
    } else {
      std::memcpy(address.sun_path, name.data(), name.size());
    }
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), length), 0) << name;
    ASSERT_EQ(listen(fd, 16), 0);
    if (name[0] != '@') chmod(name.c_str(), 0777);
    fds.push_back(fd);
  }
  Evaluation e = check(definition_candidate("host-socket", honest_unless(R"CODE(#include <cstddef>
#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
static bool reach(const char* name) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  socklen_t length = sizeof a;
  if (name[0] == '@') {
    std::memcpy(a.sun_path + 1, name + 1, std::strlen(name + 1));
    length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + std::strlen(name));
  } else {
    std::strncpy(a.sun_path, name, sizeof a.sun_path - 1);
  }
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  bool reached = connect(fd, reinterpret_cast<sockaddr*>(&a), length) == 0 && write(fd, "leak", 4) == 4;
  close(fd);
  return reached;
})CODE", "  bool breached = reach(\"" + names[0] + "\") || reach(\"" + names[1] + "\");")));
  EXPECT_NE(e.verdict, Verdict::kIncorrect) << "a host socket was reached: " << e.mismatch;
  EXPECT_NE(e.verdict, Verdict::kCompileError) << e.compiler_output;
  EXPECT_NE(e.verdict, Verdict::kCrashed) << e.reason;
  for (int fd : fds) {
    int client = accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
    EXPECT_LT(client, 0) << "a candidate connected to a socket of the host";
    if (client >= 0) close(client);
    close(fd);
  }
  fs::remove_all(dir);
}

// An #include of a host credential put it into the compiler's output, and from there
// into result.json, report.md, the checkpoint, the trajectory and the rollout store.
// The compiler sees only what the build needs: the include fails, and its text is not
// in anything the evaluation records.
TEST_F(EvaluatorTest, AnIncludedHostCredentialStaysOutOfTheEvaluation) {
  if (!sandbox_shows_a_root_of_its_own()) GTEST_SKIP() << "no file-system sandbox here";
  const fs::path credential = "/var/tmp/maxcode-evaluator-credential-" + std::to_string(getpid());
  {
    std::ofstream out(credential);
    out << "aws_secret_access_key = MAXCODE-CREDENTIAL-5b1e\n";
  }
  fs::permissions(credential, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  Evaluation e = check(definition_candidate(
      "includes-credential", honest_unless("#include \"" + credential.string() + "\"", "  bool breached = false;")));
  EXPECT_EQ(e.verdict, Verdict::kCompileError) << e.reason;
  EXPECT_NE(e.compiler_output.find("No such file or directory"), std::string::npos) << e.compiler_output;
  const std::string recorded = e.compiler_output + e.reason + e.mismatch;
  EXPECT_EQ(recorded.find("MAXCODE-CREDENTIAL"), std::string::npos) << recorded;
  for (const auto& step : e.steps) EXPECT_EQ(step.output_tail.find("MAXCODE-CREDENTIAL"), std::string::npos);
  fs::remove(credential);

  // /etc/shadow is shown as an empty file: including it compiles and quotes nothing.
  Evaluation shadow = check(
      definition_candidate("includes-shadow", honest_unless("#include \"/etc/shadow\"", "  bool breached = false;")));
  EXPECT_EQ(shadow.compiler_output.find("root:"), std::string::npos) << shadow.compiler_output;
  for (const auto& step : shadow.steps) EXPECT_EQ(step.output_tail.find("root:"), std::string::npos) << step.output_tail;
}

// Run as root, a candidate read /etc/shadow. It runs as an unprivileged user, and the
// password file is not there to read.
TEST_F(EvaluatorTest, ACandidateRunsAsNoRootAndReadsNoPasswordFile) {
  if (!sandbox_shows_a_root_of_its_own()) GTEST_SKIP() << "no file-system sandbox here";
  Evaluation e = check(definition_candidate("reads-shadow", honest_unless(R"CODE(#include <cstdio>
#include <unistd.h>
static bool reads(const char* path) {
  std::FILE* f = std::fopen(path, "r");
  bool got = f && std::fgetc(f) != EOF;
  if (f) std::fclose(f);
  return got;
})CODE", "  bool breached = getuid() == 0 || geteuid() == 0 || getgid() == 0 || reads(\"/etc/shadow\") ||\n"
         "                  reads(\"/etc/gshadow\");")));
  EXPECT_NE(e.verdict, Verdict::kIncorrect) << "ran as root or read a password file: " << e.mismatch;
  EXPECT_NE(e.verdict, Verdict::kCompileError) << e.compiler_output;
  EXPECT_NE(e.verdict, Verdict::kCrashed) << e.reason;
}

TEST_F(EvaluatorTest, DiffEditingTheTestsIsRejectedBeforeBuilding) {
  Candidate c;
  c.id = "edits-tests.diff";
  c.diff =
      "--- a/tests/test.cpp\n+++ b/tests/test.cpp\n@@ -4,3 +4,3 @@\n int main() {\n"
      "   int v[] = {1, -2, 3, 4, -5};\n-  if (sum_squares(v, 5) != 55) { std::puts(\"FAIL sum_squares(v, 5)\"); return 1; }\n"
      "+  if (false) { std::puts(\"FAIL sum_squares(v, 5)\"); return 1; }\n";
  Evaluation e = check(c);
  EXPECT_EQ(e.verdict, Verdict::kRejected) << e.reason;
  EXPECT_NE(e.reason.find("tests/test.cpp"), std::string::npos) << e.reason;
  EXPECT_TRUE(e.steps.empty()) << "nothing may run for an out-of-scope candidate";
}

// square() is called by sum_squares, so it is part of its unit: a candidate may change
// it in place. This one breaks it, and the project's tests say so.
TEST_F(EvaluatorTest, DiffThatEditsAHelperOfTheUnitIsBuiltAndTested) {
  Candidate c;
  c.id = "edits-helper.diff";
  c.diff =
      "--- a/src/sum.cpp\n+++ b/src/sum.cpp\n@@ -3,3 +3,3 @@\n"
      " // Kept from the original so that a candidate may use it: a helper outside the target.\n"
      "-static inline long long square(int x) { return static_cast<long long>(x) * x; }\n"
      "+static inline long long square(int x) { return 0 * x; }\n \n";
  Evaluation e = check(c);
  EXPECT_EQ(e.verdict, Verdict::kTestFailed) << e.reason;
}

TEST_F(EvaluatorTest, CorrectRewriteIsTimedWithAnInterval) {
  Evaluation e = check_definition(
      "same-speed", "  long long s = 0;\n  for (int p = 0; p < PASSES; ++p) {\n    s = 0;\n"
                    "    const volatile int* data = v;\n    for (int i = 0; i < n; ++i) s += square(data[i]);\n  }\n  return s;");
  ASSERT_TRUE(e.verdict == Verdict::kNotFaster || e.verdict == Verdict::kFaster) << e.reason;
  ASSERT_TRUE(e.timing);
  EXPECT_GE(e.timing->speedup.rounds, 5);
  EXPECT_LE(e.timing->speedup.low, e.timing->speedup.median);
  EXPECT_LE(e.timing->speedup.median, e.timing->speedup.high);
  EXPECT_EQ(e.timing->baseline_s.size(), e.timing->candidate_s.size());
  // Each round's runs carry the machine's CPU pressure where the kernel gives it.
  if (cpu_waited_s()) {
    EXPECT_EQ(e.timing->baseline_cpu_pressure.size(), e.timing->baseline_s.size());
    EXPECT_EQ(e.timing->candidate_cpu_pressure.size(), e.timing->candidate_s.size());
    for (double p : e.timing->baseline_cpu_pressure) EXPECT_TRUE(p >= 0 && p <= 1) << p;
  }
}

TEST_F(EvaluatorTest, MuchSlowerRewriteIsNotFaster) {
  Evaluation e = check_definition(
      "slower", "  long long s = 0;\n  for (int k = 0; k < 2 * PASSES; ++k) { s = 0; for (int i = 0; i < n; ++i) "
                "s += square(((volatile const int*)v)[i]); }\n  return s;");
  ASSERT_EQ(e.verdict, Verdict::kNotFaster) << e.reason;
  EXPECT_LT(e.timing->speedup.median, 1.0);
}

TEST_F(EvaluatorTest, KnobOutsideItsValuesIsRejected) {
  Candidate c;
  c.id = "PASSES=3";
  c.knobs = {{"PASSES", "3"}};
  Evaluation e = check(c);
  EXPECT_EQ(e.verdict, Verdict::kRejected);
  EXPECT_NE(e.reason.find("PASSES=3"), std::string::npos) << e.reason;
}

// Issue 22, point 6: a candidate poisoned the shared compiler cache from its tests, and a
// later run confirmed a copy of the original as faster. Only the original's builds write
// the cache; the candidate's build, tests and benchmark cannot, though CCACHE_DIR is set.
TEST(EvaluatorCache, OnlyTheOriginalsBuildWritesTheSharedCompilerCache) {
  if (available_isolation() == Isolation::kNone) GTEST_SKIP() << "no sandbox here: nothing is read-only to a run";
  testing::TempDir cache;
  FixtureRepo repo("sum");
  repo.set_ccache_dir(cache.path());
  // Each build leaves a mark in the cache where it can (the baseline's workspace is
  // named ws-1-baseline, a candidate's after the candidate).
  repo.config().build.command = "(touch \"$CCACHE_DIR/built-in-$(basename \"$PWD\")\" 2>/dev/null || true) && " +
                                repo.config().build.command;
  Evaluator& ev = repo.evaluator();
  Checked c = ev.check(ev.materialize(definition_candidate("poisoner", R"CODE(#include <cstdlib>
static const int poison = std::system("echo poisoned > \"$CCACHE_DIR/poisoned\" 2>/dev/null; "
                                      "mkdir -p \"$CCACHE_DIR/0\" 2>/dev/null");
long long sum_squares(const int* v, int n) {
  long long s = 0;
  for (int p = 0; p < PASSES; ++p) {
    s = 0;
    for (int i = 0; i < n; ++i) s += square(v[i]);
  }
  return s;
})CODE")));
  if (c.passed) ev.time(c);
  ev.release(c);
  std::vector<std::string> entries;
  for (const auto& entry : fs::directory_iterator(cache.path())) entries.push_back(entry.path().filename().string());
  std::string listing;
  for (const auto& name : entries) listing += name + " ";
  bool baseline = false;
  for (const auto& name : entries) {
    baseline = baseline || name.find("baseline") != std::string::npos;
    EXPECT_EQ(name.find("poisoner"), std::string::npos) << "a candidate's build wrote the cache: " << listing;
  }
  EXPECT_TRUE(baseline) << "the original's build could not write the cache: " << listing;
  EXPECT_FALSE(fs::exists(cache.path() / "poisoned")) << listing;
  EXPECT_FALSE(fs::exists(cache.path() / "0")) << listing;
  EXPECT_TRUE(c.evaluation.verdict == Verdict::kNotFaster || c.evaluation.verdict == Verdict::kFaster ||
              c.evaluation.verdict == Verdict::kRejected)
      << verdict_name(c.evaluation.verdict) << ": " << c.evaluation.reason;
}

TEST(EvaluatorSetup, OriginalThatFailsItsTestsIsASetupError) {
  FixtureRepo repo("sum");
  repo.config().test.command = "false";
  try {
    repo.evaluator();
    FAIL() << "expected SetupError";
  } catch (const SetupError& e) {
    EXPECT_NE(std::string(e.what()).find("tests failed"), std::string::npos) << e.what();
  }
}

// Issue 22: a candidate whose processes together take more memory than
// workspace.max_memory_mb (each of them well under it) is stopped, and its verdict is
// `limit`, with a reason that names the limit and the setting to change.
TEST(EvaluatorLimits, ACandidatePastTheMemoryLimitGetsTheVerdictLimit) {
  if (!cgroup_support().memory) GTEST_SKIP() << "no writable memory cgroup here: " << cgroup_support().summary;
  FixtureRepo repo("sum");
  repo.config().workspace.max_memory_mb = 256;
  Evaluator& ev = repo.evaluator();
  Checked c = ev.check(ev.materialize(definition_candidate("memory-hog", R"CODE(#include <cstdlib>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>
long long sum_squares(const int* v, int n) {
  if (n > 1000) {
    for (int k = 0; k < 4; ++k) {
      if (fork() == 0) {
        // Every page touched, through volatile: the compiler may drop an unused buffer.
        volatile char* p = static_cast<char*>(std::malloc(100 << 20));
        for (int i = 0; i < (100 << 20); i += 4096) p[i] = 1;
        sleep(3);
        _exit(p[12288] == 1 ? 0 : 1);
      }
    }
    while (wait(nullptr) > 0) {
    }
  }
  long long s = 0;
  for (int i = 0; i < n; ++i) s += square(v[i]);
  return s;
})CODE")));
  if (c.passed) ev.time(c);
  ev.release(c);
  const Evaluation& e = c.evaluation;
  EXPECT_EQ(e.verdict, Verdict::kLimit) << verdict_name(e.verdict) << ": " << e.reason;
  EXPECT_NE(e.reason.find("stopped: its processes used more than 256 MiB of memory together "
                          "(workspace.max_memory_mb)"),
            std::string::npos)
      << e.reason;
  EXPECT_EQ(to_json(e)["verdict"], "limit");
  EXPECT_EQ(evaluation_from_json(to_json(e)).verdict, Verdict::kLimit);
}

// Issue 22 point 5 (2,000 processes forked): a fork bomb in the candidate meets
// workspace.max_processes, counted for its command alone; the verdict is `limit`, not
// the timeout that follows, and none of its processes is left afterwards.
TEST(EvaluatorLimits, AForkBombGetsTheVerdictLimitAndLeavesNoProcess) {
  if (!cgroup_support().processes) GTEST_SKIP() << "no writable pids cgroup here: " << cgroup_support().summary;
  FixtureRepo repo("sum");
  repo.config().workspace.max_processes = 64;
  repo.config().test.timeout_s = 10;
  for (auto& b : repo.config().benchmarks) b.timeout_s = 10;
  Evaluator& ev = repo.evaluator();
  const auto before = std::chrono::steady_clock::now();
  Checked c = ev.check(ev.materialize(definition_candidate("fork-bomb", R"CODE(#include <sys/prctl.h>
#include <unistd.h>
long long sum_squares(const int* v, int n) {
  prctl(PR_SET_NAME, "mxc-fork-bomb");  // inherited by every child: the test finds them
  for (;;) fork();
  return 0;
})CODE")));
  if (c.passed) ev.time(c);
  ev.release(c);
  const Evaluation& e = c.evaluation;
  EXPECT_EQ(e.verdict, Verdict::kLimit) << verdict_name(e.verdict) << ": " << e.reason;
  EXPECT_NE(e.reason.find("(workspace.max_processes)"), std::string::npos) << e.reason;
  std::cout << "fork bomb: " << verdict_name(e.verdict) << ": " << e.reason << "\n";
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(120));
  // Not one process of the bomb is left (a zombie not yet reaped by whoever inherited
  // it is dead already).
  std::string left;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    if (stat.find("(mxc-fork-bomb)") != std::string::npos && stat.find(") Z ") == std::string::npos)
      left += stat.substr(0, 40) + "\n";
  }
  EXPECT_EQ(left, "") << "processes of the fork bomb outlived its run";
}

TEST(EvaluatorSetup, NondeterministicBenchmarkIsASetupError) {
  FixtureRepo repo("sum");
  repo.config().benchmarks[0].command = "od -An -N4 -tu4 /dev/urandom";
  EXPECT_THROW(repo.evaluator(), SetupError);
}

// A benchmark that prints its own timing, coarsely enough that two runs of the original
// can agree: here the first seed's first two runs print "time: 7 ms" and its third
// "time: 9 ms". The field is still found (the third run is never skipped), where before
// a repeat that agreed left it compared and every faster candidate incorrect.
TEST(EvaluatorSetup, ATimingThatAgreesOnceIsStillFoundByTheThirdRun) {
  FixtureRepo repo("sum");
  const std::string first = std::to_string(repo.config().acceptance.seeds.at(0));
  repo.config().benchmarks[0].command =
      "./bench.bin && m=0 && if [ \"$MAXCODE_SEED\" = " + first +
      " ]; then m=$(( $(cat .first-seed-runs 2>/dev/null || echo 0) + 1 )); echo $m > .first-seed-runs; fi && "
      "if [ $m -ge 3 ]; then echo 'time: 9 ms'; else echo 'time: 7 ms'; fi";
  Evaluator& ev = repo.evaluator();
  const std::vector<VaryingField> want{{"time: # ms", 0}};
  ASSERT_EQ(ev.varying_fields().size(), 1u);
  EXPECT_EQ(ev.varying_fields()[0], want);
}

// A number the config names as varying (`maxcode init` writes the timings it found) is
// left out even when the original printed it the same every time: a correct candidate
// whose run prints another timing passes, and without the entry it is incorrect.
TEST(EvaluatorSetup, ANumberTheConfigNamesAsVaryingIsNotCompared) {
  const std::string command =
      "./bench.bin && case \"$PWD\" in *baseline*) echo 'time: 7 ms';; *) echo 'time: 9 ms';; esac";
  const Candidate same = definition_candidate(
      "same",
      "long long sum_squares(const int* v, int n) {\n  long long s = 0;\n  for (int i = 0; i < n; ++i) "
      "s += static_cast<long long>(v[i]) * v[i];\n  return s;\n}");
  for (const bool named : {true, false}) {
    FixtureRepo repo("sum");
    repo.config().benchmarks[0].command = command;
    if (named) repo.config().benchmarks[0].varying = {{"time: # ms", 0}};
    Evaluator& ev = repo.evaluator();
    Checked c = ev.check(ev.materialize(same));
    ev.release(c);
    if (named) {
      EXPECT_TRUE(c.passed) << c.evaluation.reason;
    } else {
      EXPECT_FALSE(c.passed);
      EXPECT_EQ(c.evaluation.verdict, Verdict::kIncorrect) << c.evaluation.reason;
    }
  }
}

}  // namespace
}  // namespace maxcode
