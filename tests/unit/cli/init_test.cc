// `maxcode init` as a user runs it, on a CMake project whose benchmark is a Google
// Benchmark program (tests/fixtures/gbench-prefix) and on one without any benchmark.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "runner/core/config.h"
#include "runner/util/files.h"
#include "runner/util/process.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::write_file;

Outcome maxcode(const std::string& args) {
  Command c;
  c.shell = std::string(MAXCODE_BINARY) + " " + args;
  c.timeout_s = 600;
  return run(c);
}

// `maxcode init` on a copy of tests/fixtures/<fixture> at <dir>/repo; what it printed.
Outcome InitFixture(const fs::path& dir, const std::string& fixture) {
  copy_tree(testing::source_path("tests/fixtures/" + fixture), dir / "repo");
  Outcome o = maxcode("init " + (dir / "repo").string() + " -q");
  std::printf("%s", o.out.c_str());
  return o;
}

// `maxcode optimize` of <dir>/repo with the config init wrote, replaying its two candidates:
// `winner` wins, the other earns `loser_verdict`.
void ExpectReplayedWinner(const fs::path& dir, const std::string& function, const std::string& winner,
                          const std::string& loser_verdict) {
  Outcome opt =
      maxcode("optimize " + (dir / "repo").string() + " --function " + function + " --policy replay --replay-dir " +
              (dir / "repo/replay").string() + " --out " + (dir / "out").string());
  ASSERT_EQ(opt.exit_code, 0) << opt.err;
  const auto result = nlohmann::json::parse(read_text(dir / "out/result.json"));
  ASSERT_EQ(result["candidates"].size(), 2u) << result.dump(2);
  EXPECT_EQ(result["candidates"][1]["verdict"], loser_verdict) << result["candidates"][1].dump(2);
  ASSERT_FALSE(result["winner"].is_null()) << result["candidates"].dump(2);
  EXPECT_EQ(result["winner"]["id"], winner);
}

TEST(Init, WritesAConfigThatParsesChecksTheOriginalAndSaysWhatIsLeft) {
  TempDir dir;
  copy_tree(testing::source_path("tests/fixtures/gbench-prefix"), dir / "repo");
  Outcome o = maxcode("init " + (dir / "repo").string() + " -q");
  std::printf("%s", o.out.c_str());
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const Config config = load_config(dir / "repo/.maxcode.json");
  ASSERT_EQ(config.benchmarks.size(), 1u);
  EXPECT_EQ(config.benchmarks[0].metric, "google-benchmark");
  EXPECT_EQ(config.benchmarks[0].command, "./build/prefix_bench");
  EXPECT_EQ(config.test.command, "ctest --test-dir build --output-on-failure");
  EXPECT_EQ(config.scope.include, std::vector<std::string>{"src/**"});
  // The original was built, tested and run with every seed, and said so.
  for (const std::string line : {"ok    builds (cmake --build build -j)",
                                 "ok    tests pass (ctest --test-dir build --output-on-failure)",
                                 "ok    benchmark 'prefix_bench' runs with each of 3 MAXCODE_SEED values and writes its "
                                 "JSON times"})
    EXPECT_NE(o.out.find(line), std::string::npos) << line << "\n" << o.out;
  EXPECT_EQ(o.out.find("FAIL"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("still to decide"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("targets.functions is empty"), std::string::npos) << o.out;
  // No knobs in the repository: not tune, whose search would have nothing to try.
  EXPECT_EQ(config.search.policy, SearchPolicy::kMaxcode);
  EXPECT_EQ(config.llm["propose"]["provider"], "openai");
  EXPECT_NE(o.out.find("search.policy is \"maxcode\""), std::string::npos) << o.out;

  // A second init leaves the person's file alone.
  const std::string before = read_text(dir / "repo/.maxcode.json");
  Outcome again = maxcode("init " + (dir / "repo").string() + " --no-check -q");
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find(".maxcode.json exists already: maxcode init does not overwrite it (--force replaces it; --recheck checks it as it is)"),
            std::string::npos) << again.err;
  EXPECT_EQ(read_text(dir / "repo/.maxcode.json"), before);
}

// A float repository whose plain benchmark prints its own timing, from `init` to a
// winner with no hand edit: the timing is found to vary and left out, the tolerance
// comes from the original built with fast-math flags (the defaults, rtol 1e-6, reject
// every honest reordering of a float sum).
TEST(Init, AFloatRepositoryWhoseBenchmarkPrintsTimingsGetsAWinnerWithNoHandEdit) {
  TempDir dir;
  Outcome o = InitFixture(dir.path(), "float-timed");
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(o.out.find("FAIL"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("'time: # ms (# ns per element)' (number 1)"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("fast-math"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("prints the same output twice for one seed, apart from 2 numbers that differ"),
            std::string::npos)
      << o.out;
  const Config config = load_config(dir / "repo/.maxcode.json");
  ASSERT_EQ(config.benchmarks.size(), 1u);
  EXPECT_GE(config.benchmarks[0].rtol, 1e-5);
  EXPECT_LE(config.benchmarks[0].rtol, 1e-2);
  // The timings are written into the config: a run whose original happens to print the
  // same timing twice still leaves them out (CI once saw every candidate rejected so).
  const std::vector<VaryingField> timings{{"time: # ms (# ns per element)", 0}, {"time: # ms (# ns per element)", 1}};
  EXPECT_EQ(config.benchmarks[0].varying, timings);

  ExpectReplayedWinner(dir.path(), "total_energy", "01-one-pass.cc", "incorrect");
}

// A Meson repository, from `init` to a winner with no hand edit: the config builds with
// meson, runs the test() and the benchmark() it found, and the replayed candidates are
// judged with it.
TEST(Init, AMesonRepositoryGetsAConfigThatFindsTheWinner) {
  if (run(Command{.shell = "command -v meson", .timeout_s = 10}).exit_code != 0)
    GTEST_SKIP() << "meson is not installed (scripts/setup.sh installs it)";
  TempDir dir;
  Outcome o = InitFixture(dir.path(), "meson-prefix");
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(o.out.find("FAIL"), std::string::npos) << o.out;
  for (const std::string line : {"found: Meson; meson tests; 1 benchmark(s)", "ok    builds (meson compile -C build)",
                                 "ok    tests pass (meson test -C build)"})
    EXPECT_NE(o.out.find(line), std::string::npos) << line << "\n" << o.out;
  const Config config = load_config(dir / "repo/.maxcode.json");
  // The benchmark is built only with its option on (meson_options.txt: off by default).
  EXPECT_EQ(config.build.configure, "meson setup build --buildtype=release -Dbenchmarks=true");
  EXPECT_EQ(config.test.command, "meson test -C build");
  ASSERT_EQ(config.benchmarks.size(), 1u);
  EXPECT_EQ(config.benchmarks[0].command, "./build/bench/prefix_bench");
  EXPECT_EQ(config.scope.include, std::vector<std::string>{"src/**"});

  ExpectReplayedWinner(dir.path(), "prefix_sums", "01-running-sum.cc", "test-failed");
}

TEST(Init, ARepositoryWithoutABenchmarkGetsAClearMessageAndNoFile) {
  TempDir dir;
  write_file(dir / "repo/CMakeLists.txt", "project(p CXX)\nadd_library(p src/p.cc)\n");
  write_file(dir / "repo/src/p.cc", "int p() { return 0; }\n");
  Outcome o = maxcode("init " + (dir / "repo").string() + " -q");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.err.find("maxcode: error: no benchmark found in " + (dir / "repo").string() + ". maxcode looked for:"),
            std::string::npos) << o.err;
  EXPECT_NE(o.err.find("CMakeLists.txt (add_executable targets"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("MAXCODE_SEED"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(dir / "repo/.maxcode.json"));
}

TEST(Init, HelpNamesTheOptions) {
  Outcome o = maxcode("init --help");
  EXPECT_EQ(o.exit_code, 0);
  for (const char* option : {"--config", "--force", "--no-check"}) EXPECT_NE(o.out.find(option), std::string::npos) << option;
}

}  // namespace
}  // namespace maxcode
