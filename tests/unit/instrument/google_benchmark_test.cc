#include "runner/instrument/google_benchmark.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "runner/util/files.h"
#include "runner/util/process.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

using nlohmann::json;

TEST(GoogleBenchmark, AveragesRepetitionsAndSkipsAggregates) {
  const json document = json::parse(R"({"context": {}, "benchmarks": [
    {"name": "BM_a/64", "run_name": "BM_a/64", "run_type": "iteration", "iterations": 1000,
     "real_time": 2.0, "cpu_time": 1.5, "time_unit": "us"},
    {"name": "BM_a/64", "run_name": "BM_a/64", "run_type": "iteration", "iterations": 1000,
     "real_time": 4.0, "cpu_time": 3.5, "time_unit": "us"},
    {"name": "BM_a/64_mean", "run_name": "BM_a/64", "run_type": "aggregate", "aggregate_name": "mean",
     "iterations": 2, "real_time": 3.0, "cpu_time": 2.5, "time_unit": "us"},
    {"name": "BM_b", "run_name": "BM_b", "run_type": "iteration", "iterations": 10,
     "real_time": 1.0, "cpu_time": 1.0, "time_unit": "ms"}]})");
  GoogleBenchmarkRun run = parse_google_benchmark(document, "out.json");
  ASSERT_EQ(run.entries.size(), 2u);
  EXPECT_EQ(run.entries[0].name, "BM_a/64");
  EXPECT_EQ(run.entries[0].repetitions, 2);
  EXPECT_EQ(run.entries[0].iterations, 2000);
  EXPECT_DOUBLE_EQ(run.entries[0].real_s, 3e-6);
  EXPECT_DOUBLE_EQ(run.entries[0].cpu_s, 2.5e-6);
  EXPECT_DOUBLE_EQ(run.entries[1].real_s, 1e-3);
  EXPECT_DOUBLE_EQ(run.seconds(), 3e-6 + 1e-3);
  EXPECT_DOUBLE_EQ(to_json(run)["seconds"].get<double>(), run.seconds());
}

TEST(GoogleBenchmark, FailuresNameTheFileAndTheBenchmark) {
  auto error_of = [](const std::string& text) {
    try {
      parse_google_benchmark(json::parse(text), "out.json");
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(error_of(R"({"benchmarks": [{"name": "BM_x", "run_type": "iteration", "error_occurred": true,
                                         "error_message": "size too large"}]})"),
            "out.json: benchmark 'BM_x' failed: size too large");
  EXPECT_EQ(error_of(R"({"benchmarks": []})"),
            "out.json: the program ran no benchmark (a --benchmark_filter that matches nothing?)");
  EXPECT_EQ(error_of(R"({"results": []})"), "out.json: not Google Benchmark JSON output (no \"benchmarks\" array)");
  EXPECT_EQ(error_of(R"({"benchmarks": [{"name": "BM_y", "real_time": 1, "time_unit": "fortnights"}]})"),
            "out.json: unknown time_unit 'fortnights'");
  testing::TempDir dir;
  try {
    read_google_benchmark(dir.path(), dir / "absent.json");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("did not run a Google Benchmark program"), std::string::npos) << e.what();
  }
}

// A real program built against Debian's libbenchmark, told where to write only through
// the environment that google_benchmark_env gives (its command line stays the user's).
TEST(GoogleBenchmark, ReadsWhatARealProgramWrites) {
  testing::TempDir dir;
  testing::write_file(dir / "b.cc", R"(#include <benchmark/benchmark.h>
#include <vector>
static void BM_sum(benchmark::State& state) {
  std::vector<int> v(state.range(0), 1);
  for (auto _ : state) {
    long total = 0;
    for (int x : v) benchmark::DoNotOptimize(total += x);
  }
}
BENCHMARK(BM_sum)->Arg(1000)->Arg(100000);
BENCHMARK_MAIN();
)");
  const std::string build = "c++ -O1 -o " + (dir / "b").string() + " " + (dir / "b.cc").string() +
                            " -lbenchmark -lpthread 2>&1";
  ASSERT_EQ(std::system(build.c_str()), 0) << build;
  std::string command = "env";
  for (const auto& [name, value] : google_benchmark_env(dir / "out.json")) command += " " + name + "=" + value;
  command += " BENCHMARK_MIN_TIME=0.02 " + (dir / "b").string() + " > /dev/null 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  GoogleBenchmarkRun run = read_google_benchmark(dir.path(), dir / "out.json");
  ASSERT_EQ(run.entries.size(), 2u);
  EXPECT_EQ(run.entries[0].name, "BM_sum/1000");
  EXPECT_EQ(run.entries[1].name, "BM_sum/100000");
  EXPECT_GT(run.entries[0].iterations, 0);
  // A hundred times the work takes longer per iteration: the figures are real times.
  EXPECT_GT(run.entries[1].real_s, 10 * run.entries[0].real_s);
  std::printf("BM_sum/1000 %.3g s, BM_sum/100000 %.3g s per iteration\n", run.entries[0].real_s, run.entries[1].real_s);

  // The filter a target's entries give, through the environment alone: one entry runs.
  command = "env";
  for (const auto& [name, value] : google_benchmark_env(dir / "one.json", google_benchmark_filter({"BM_sum/100000"})))
    command += " " + name + "=" + shell_quote(value);
  command += " BENCHMARK_MIN_TIME=0.02 " + (dir / "b").string() + " > /dev/null 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  run = read_google_benchmark(dir.path(), dir / "one.json");
  ASSERT_EQ(run.entries.size(), 1u);
  EXPECT_EQ(run.entries[0].name, "BM_sum/100000");
}

TEST(GoogleBenchmark, AFilterMatchesTheEntriesExactly) {
  EXPECT_EQ(google_benchmark_filter({"BM_a/8", "BM_f<int>/min_time:0.300"}), "^(BM_a/8|BM_f<int>/min_time:0\\.300)$");
  EXPECT_EQ(google_benchmark_filter({"x(1)+[2]*$"}), "^(x\\(1\\)\\+\\[2\\]\\*\\$)$");
}

// The metric end to end: `maxcode eval` on a project whose benchmark is a Google
// Benchmark program, run unchanged; the candidate is timed by the program's own
// per-iteration figures (its wall time would hardly move) and judged faster.
TEST(GoogleBenchmark, ACandidateIsTimedByTheProgramsOwnFigures) {
  testing::TempDir dir;
  copy_tree(testing::source_path("tests/fixtures/gbench-prefix"), dir / "repo");
  // Short runs: the library reads BENCHMARK_MIN_TIME from its environment, which the
  // config lets through to candidate commands.
  testing::write_file(dir / "repo/.maxcode.json", R"({
    "build": {"configure": "cmake -S . -B build -DCMAKE_BUILD_TYPE=Release", "command": "cmake --build build -j"},
    "test": {"command": "ctest --test-dir build --output-on-failure"},
    "benchmarks": [{"name": "prefix", "command": "./build/prefix_bench", "metric": "google-benchmark"}],
    "scope": {"include": ["src/**"]},
    "acceptance": {"min_rounds": 3, "max_rounds": 5, "warmup_rounds": 0},
    "workspace": {"env_allow": ["BENCHMARK_MIN_TIME"]}
  })");
  Command c;
  c.shell = "BENCHMARK_MIN_TIME=0.02 " + std::string(MAXCODE_BINARY) + " eval " + (dir / "repo").string() +
            " --function prefix_sum --candidate " + (dir / "repo/replay/01-running-total.cc").string() + " --out " +
            (dir / "out").string() + " -q";
  c.timeout_s = 600;
  Outcome o = run(c);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const json result = json::parse(read_text(dir / "out/result.json"));
  const json& candidate = result.at("candidates").at(0);
  EXPECT_EQ(candidate.at("verdict"), "faster") << candidate.dump(2);
  const double speedup = candidate.at("timing").at("speedup").at("median").get<double>();
  // Quadratic against linear at n = 2048: two orders of magnitude, whatever the load.
  EXPECT_GT(speedup, 20) << candidate.dump(2);
  const double baseline_s = candidate.at("timing").at("baseline_median_s").get<double>();
  EXPECT_LT(baseline_s, 0.05) << "a time per iteration, not the program's wall time";
  std::printf("google-benchmark metric: %.1fx, original %.3g s per iteration\n", speedup, baseline_s);
}

}  // namespace
}  // namespace maxcode
