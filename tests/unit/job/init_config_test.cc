#include "runner/job/init_config.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "runner/core/config.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;

// The proposed file, read back by the strict reader every command uses.
Config written(const ProposedConfig& proposed, std::string* text_out = nullptr) {
  testing::TempDir dir;
  const std::string text = render_config(proposed);
  if (text_out) *text_out = text;
  testing::write_file(dir / ".maxcode.json", text);
  return load_config(dir / ".maxcode.json");
}

bool mentions(const std::vector<std::string>& lines, const std::string& part) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

ProjectScan cmake_scan() {
  ProjectScan scan;
  scan.root = "/repo";
  scan.cmake = true;
  scan.ctest = true;
  scan.source_dirs = {"src"};
  ScannedBenchmark b;
  b.name = "prefix_bench";
  b.binary = "build/prefix_bench";
  b.framework = "google-benchmark";
  b.why = "add_executable(prefix_bench) in CMakeLists.txt, a Google Benchmark program";
  scan.benchmarks = {b};
  return scan;
}

// A benchmark built only behind an option that is off by default: the configure step
// turns it on, once however many benchmarks need it, and the comment says why.
TEST(InitConfig, TheOptionsABenchmarkIsBuiltBehindAreTurnedOn) {
  ProjectScan scan = cmake_scan();
  scan.benchmarks[0].cmake_options = {"BASE64_BUILD_TESTS"};
  ScannedBenchmark second = scan.benchmarks[0];
  second.name = "other_bench";
  second.binary = "build/other_bench";
  second.cmake_options = {"BASE64_BUILD_TESTS", "WITH_BENCH"};
  scan.benchmarks.push_back(second);
  std::string text;
  const Config config = written(propose_config(scan), &text);
  EXPECT_EQ(config.build.configure,
            "cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBASE64_BUILD_TESTS=ON -DWITH_BENCH=ON");
  EXPECT_NE(text.find("built only with BASE64_BUILD_TESTS, WITH_BENCH on"), std::string::npos) << text;
}

TEST(InitConfig, AGoogleBenchmarkProjectGetsACommentedConfigThatReadsBack) {
  std::string text;
  const ProposedConfig proposed = propose_config(cmake_scan());
  Config config = written(proposed, &text);
  EXPECT_EQ(config.build.configure, "cmake -S . -B build -DCMAKE_BUILD_TYPE=Release");
  EXPECT_EQ(config.build.command, "cmake --build build -j");
  EXPECT_EQ(config.test.command, "ctest --test-dir build --output-on-failure");
  ASSERT_EQ(config.benchmarks.size(), 1u);
  EXPECT_EQ(config.benchmarks[0].name, "prefix_bench");
  EXPECT_EQ(config.benchmarks[0].command, "./build/prefix_bench");
  EXPECT_EQ(config.benchmarks[0].metric, "google-benchmark");
  EXPECT_FALSE(config.benchmarks[0].compare_output);
  EXPECT_EQ(config.scope.include, std::vector<std::string>{"src/**"});
  EXPECT_TRUE(config.targets.functions.empty());
  // No knobs in the scan: the model's policy, not tune (which would have nothing to try).
  EXPECT_EQ(config.search.policy, SearchPolicy::kMaxcode);
  EXPECT_EQ(config.llm["propose"]["model"], "gpt-4.1");
  ProjectScan with_knobs = cmake_scan();
  with_knobs.knobs = true;
  EXPECT_EQ(written(propose_config(with_knobs)).search.policy, SearchPolicy::kTune);
  // The file explains itself to the person who opens it.
  EXPECT_EQ(text.rfind("// maxcode project file", 0), 0u) << text;
  EXPECT_NE(text.find("\"$schema\": \"https://maxcode.dev/schema/maxcode.schema.json\""), std::string::npos) << text;
  EXPECT_NE(text.find("// DECIDE: which function"), std::string::npos) << text;
  EXPECT_NE(text.find("// prefix_bench: add_executable(prefix_bench) in CMakeLists.txt"), std::string::npos) << text;
  EXPECT_TRUE(mentions(proposed.decisions, "targets.functions is empty"));
  EXPECT_TRUE(mentions(proposed.decisions, "Correctness of candidates comes from the tests only"));
  EXPECT_FALSE(mentions(proposed.decisions, "No tests were found"));
}

TEST(InitConfig, PresetsAndACudaPlainBenchmark) {
  ProjectScan scan = cmake_scan();
  scan.preset = "release";
  scan.build_preset = "release-build";
  scan.test_preset = "release-test";
  scan.binary_dir = "out";
  scan.cuda = true;
  scan.benchmarks[0].framework = "plain";
  scan.benchmarks[0].cuda = true;
  scan.benchmarks[0].binary = "out/bench";
  const ProposedConfig proposed = propose_config(scan);
  Config config = written(proposed);
  EXPECT_EQ(config.build.configure, "cmake --preset release");
  EXPECT_EQ(config.build.command, "cmake --build --preset release-build");
  EXPECT_EQ(config.test.command, "ctest --preset release-test --output-on-failure");
  EXPECT_EQ(config.benchmarks[0].metric, "kernels");
  EXPECT_TRUE(config.benchmarks[0].compare_output) << "a plain benchmark's printed results are compared";
  EXPECT_EQ(config.benchmarks[0].command, "./out/bench");
  EXPECT_EQ(config.workspace.exclude, (std::vector<std::string>{"build", ".maxcode", "out"}));
  EXPECT_TRUE(mentions(proposed.decisions, "does not mention MAXCODE_SEED"));
  EXPECT_TRUE(mentions(proposed.decisions, "NVIDIA GPU"));
}

TEST(InitConfig, NoTestsIsADecisionNotASilentPass) {
  ProjectScan scan = cmake_scan();
  scan.ctest = false;
  scan.test_dirs = {"tests"};
  std::string text;
  const ProposedConfig proposed = propose_config(scan);
  Config config = written(proposed, &text);
  EXPECT_EQ(config.test.command, "true");
  EXPECT_NE(text.find("DECIDE: no tests found (no ctest tests; tests/ is not registered)"), std::string::npos) << text;
  EXPECT_TRUE(mentions(proposed.decisions, "No tests were found"));
}

TEST(InitConfig, NoBenchmarkSaysWhatWasLookedForAndWhatToWrite) {
  ProjectScan scan = cmake_scan();
  scan.benchmarks.clear();
  scan.notes = {"add_test without enable_testing() or include(CTest): ctest finds no tests"};
  try {
    propose_config(scan);
    FAIL() << "expected NoBenchmarkError";
  } catch (const NoBenchmarkError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("no benchmark found in /repo. maxcode looked for:", 0), 0u) << message;
    for (const std::string& what : scan_looked_for()) EXPECT_NE(message.find(what), std::string::npos) << what;
    EXPECT_NE(message.find("add_test without enable_testing()"), std::string::npos);
    EXPECT_NE(message.find("MAXCODE_SEED"), std::string::npos);
    EXPECT_NE(message.find("\"benchmarks\": [{\"name\": \"main\", \"command\": \"./build/bench\"}]"), std::string::npos);
  }
  scan = cmake_scan();
  scan.cmake = false;
  EXPECT_THROW(propose_config(scan), NoBenchmarkError) << "benchmarks but no build system";
}

// Two programs of one name in different folders (Meson allows it): the config needs unique
// names, so the second is named by its path.
TEST(InitConfig, BenchmarksOfOneNameGetUniqueNames) {
  ProjectScan scan = cmake_scan();
  ScannedBenchmark other = scan.benchmarks[0];
  other.binary = "build/extra/prefix_bench";
  scan.benchmarks.push_back(other);
  Config config = written(propose_config(scan));
  ASSERT_EQ(config.benchmarks.size(), 2u);
  EXPECT_EQ(config.benchmarks[0].name, "prefix_bench");
  EXPECT_EQ(config.benchmarks[1].name, "build/extra/prefix_bench");
  EXPECT_EQ(config.benchmarks[1].command, "./build/extra/prefix_bench");
}

// A Bazel project (or Autotools, SCons, ...): init does not read it, and says so with the
// system's own commands to start a config from, not advice about CMakeLists.txt.
TEST(InitConfig, ABuildSystemInitDoesNotReadIsNamedWithItsCommands) {
  testing::TempDir dir;
  testing::write_file(dir / "MODULE.bazel", "module(name = \"sum\")\n");
  testing::write_file(dir / "BUILD.bazel", "cc_binary(name = \"bench_sum\", srcs = [\"bench/bench_sum.cpp\"])\n");
  testing::write_file(dir / "src" / "sum.cpp", "long sum(const int* v, int n) { return n ? v[0] : 0; }\n");
  ProjectScan scan = scan_project(dir.path());
  EXPECT_EQ(scan.unread_build_file, "MODULE.bazel");
  EXPECT_EQ(scan.unread_build_system, "Bazel");
  try {
    propose_config(scan);
    FAIL() << "expected NoBenchmarkError";
  } catch (const NoBenchmarkError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("is built with Bazel (MODULE.bazel), which `maxcode init` does not read"), std::string::npos)
        << message;
    EXPECT_NE(message.find("\"bazel build -c opt //...\""), std::string::npos) << message;
    EXPECT_NE(message.find("\"bazel test //...\""), std::string::npos) << message;
    EXPECT_EQ(message.find("CMakeLists.txt) that"), std::string::npos) << message;
  }
  // Benchmarks found, no build init reads: the same advice.
  ScannedBenchmark b;
  b.name = "bench_sum";
  b.binary = "bench_sum";
  scan.benchmarks = {b};
  try {
    propose_config(scan);
    FAIL() << "expected NoBenchmarkError";
  } catch (const NoBenchmarkError& e) {
    EXPECT_NE(std::string(e.what()).find("bazel build -c opt"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace maxcode
