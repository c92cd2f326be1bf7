#include "runner/profile/benchmark_entries.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "runner/util/files.h"
#include "runner/util/process.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Stacks as the sampler gives them, innermost first, one per (frames, weight).
CallStacks stacks_of(const std::vector<std::pair<std::vector<std::string>, double>>& list) {
  CallStacks stacks;
  for (const auto& [functions, weight] : list) {
    CallStack s;
    s.weight = weight;
    for (const std::string& f : functions) {
      CodeFrame frame;
      frame.function = f;
      s.frames.push_back(stacks.intern(frame));
    }
    stacks.stacks.push_back(s);
  }
  return stacks;
}

GoogleBenchmarkRun run_of(const std::vector<std::pair<std::string, double>>& entries) {
  GoogleBenchmarkRun run;
  for (const auto& [name, seconds] : entries) run.entries.push_back({name, seconds, seconds, 100, 1});
  return run;
}

double weight_of(const CallStacks& stacks, const std::string& leaf) {
  double w = 0;
  for (const CallStack& s : stacks.stacks)
    if (stacks.frames[s.frames.front()].function == leaf) w += s.weight;
  return w;
}

// The time-zone library's shape: the entry sampled most is a sliver of the metric.
TEST(BenchmarkEntries, SamplesAreWeighedByTheirEntrysPartOfTheMetric) {
  CallStacks stacks = stacks_of({
      {{"load_zone(char const*)", "BM_load(benchmark::State&)", "main"}, 100},
      {{"lookup(long)", "BM_lookup(benchmark::State&)", "main"}, 900},
      {{"__libc_start_main"}, 50},  // setup outside any entry
  });
  const EntryWeighting w =
      weigh_by_entries(stacks, run_of({{"BM_load/utc", 0.009}, {"BM_load/paris", 0.0009}, {"BM_lookup", 1e-7}}));
  ASSERT_TRUE(w.applied) << w.note;
  ASSERT_EQ(w.groups.size(), 2u);
  EXPECT_EQ(w.groups[0].entries, (std::vector<std::string>{"BM_load/utc", "BM_load/paris"}));
  EXPECT_EQ(w.unplaced, 50);
  // The total stays; its shares follow the metric: 0.0099 against 1e-7.
  EXPECT_NEAR(weight_of(stacks, "load_zone(char const*)"), 1050 * 0.0099 / (0.0099 + 1e-7), 1e-6);
  EXPECT_NEAR(weight_of(stacks, "lookup(long)"), 1050 * 1e-7 / (0.0099 + 1e-7), 1e-9);
  EXPECT_EQ(weight_of(stacks, "__libc_start_main"), 0);
  // What each function drives: its entries, and main all of them.
  EXPECT_EQ(w.drives.at("lookup(long)"), std::vector<std::string>{"BM_lookup"});
  EXPECT_EQ(w.drives.at("load_zone(char const*)"), (std::vector<std::string>{"BM_load/utc", "BM_load/paris"}));
  EXPECT_EQ(w.drives.at("main").size(), 3u);
}

TEST(BenchmarkEntries, TemplatesFixturesAndNamespacesAreFound) {
  CallStacks stacks = stacks_of({
      {{"f()", "void BM_copy<std::vector<int> >(benchmark::State&)"}, 10},
      {{"g()", "Parse_Small_Benchmark::BenchmarkCase(benchmark::State&)"}, 10},
      {{"h()", "(anonymous namespace)::BM_hash(benchmark::State&)"}, 10},
  });
  const EntryWeighting w = weigh_by_entries(
      stacks, run_of({{"BM_copy<std::vector<int> >/8", 1}, {"Parse/Small/2", 2}, {"BM_hash", 3}}));
  ASSERT_TRUE(w.applied) << w.note;
  EXPECT_EQ(w.unplaced, 0);
  EXPECT_EQ(w.drives.at("f()"), std::vector<std::string>{"BM_copy<std::vector<int> >/8"});
  EXPECT_EQ(w.drives.at("g()"), std::vector<std::string>{"Parse/Small/2"});
  EXPECT_EQ(w.drives.at("h()"), std::vector<std::string>{"BM_hash"});
  EXPECT_NEAR(weight_of(stacks, "h()"), 30.0 * 3 / 6, 1e-9);
}

// Entries registered through a lambda name no function: the profile stays by CPU time.
TEST(BenchmarkEntries, StacksThatNameNoEntryLeaveTheProfileByCpuTime) {
  CallStacks stacks = stacks_of({{{"work()", "{lambda(benchmark::State&)#1}::operator()"}, 100}});
  const EntryWeighting w = weigh_by_entries(stacks, run_of({{"parse", 1}}));
  EXPECT_FALSE(w.applied);
  EXPECT_NE(w.note.find("name no benchmark function"), std::string::npos) << w.note;
  EXPECT_EQ(weight_of(stacks, "work()"), 100);
}

TEST(BenchmarkEntries, AFilterIsSetOnlyWhereTheConfigGivesNone) {
  std::vector<BenchmarkConfig> benchmarks(3);
  benchmarks[0].name = "a";
  benchmarks[0].metric = "google-benchmark";
  benchmarks[1].name = "b";
  benchmarks[1].metric = "google-benchmark";
  benchmarks[1].filter = "BM_mine";
  benchmarks[2].name = "c";  // wall time
  const auto notes = time_driven_entries(benchmarks, {{"a", {"BM_x/1"}}, {"b", {"BM_y"}}, {"c", {"BM_z"}}});
  EXPECT_EQ(benchmarks[0].filter, "^(BM_x/1)$");
  EXPECT_EQ(benchmarks[1].filter, "BM_mine");
  EXPECT_EQ(benchmarks[2].filter, "");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("timing only the entries the target drives: BM_x/1"), std::string::npos) << notes[0];
}

// End to end on a Google Benchmark project of two entries (tests/fixtures/gbench-entries):
// checksum has most of the CPU samples, prefix_sum nearly all of the metric. With no
// function named, `optimize` chooses prefix_sum, times only its entry, and reports the
// entry's times; named to `optimize` or in `maxcode run`'s input, it is timed on its entry
// alike.
TEST(BenchmarkEntries, OptimizeChoosesByThePartOfTheMetricAndTimesOnlyTheDrivenEntries) {
  testing::TempDir dir;
  copy_tree(testing::source_path("tests/fixtures/gbench-entries"), dir / "repo");
  testing::write_file(dir / "repo/.maxcode.json", R"({
    "build": {"configure": "cmake -S . -B build -DCMAKE_BUILD_TYPE=Release", "command": "cmake --build build -j"},
    "test": {"command": "ctest --test-dir build --output-on-failure"},
    "benchmarks": [{"name": "prefix", "command": "./build/prefix_bench", "metric": "google-benchmark"}],
    "scope": {"include": ["src/**"]},
    "search": {"policy": "replay", "replay_dir": "replay"},
    "acceptance": {"min_rounds": 3, "max_rounds": 5, "warmup_rounds": 0},
    "workspace": {"env_allow": ["BENCHMARK_MIN_TIME"]}
  })");
  Command c;
  c.shell = "BENCHMARK_MIN_TIME=0.02 " + std::string(MAXCODE_BINARY) + " optimize " + (dir / "repo").string() +
            " --out " + (dir / "out").string();
  c.timeout_s = 600;
  const Outcome o = run(c);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.err.find("chose prefix_sum"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("of the metric"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("timing only the entries the target drives: BM_prefix_sum/2048"), std::string::npos) << o.err;
  const json result = json::parse(read_text(dir / "out/result.json"));
  const json& timing = result.at("candidates").at(0).at("timing");
  ASSERT_EQ(timing.at("entries").size(), 1u) << timing.dump(2);
  EXPECT_EQ(timing["entries"][0].at("name"), "BM_prefix_sum/2048");
  EXPECT_EQ(result.at("candidates").at(0).at("verdict"), "faster");
  EXPECT_NE(read_text(dir / "out/report.md").find("| prefix | `BM_prefix_sum/2048` |"), std::string::npos);
  std::printf("gbench-entries: %.1fx on BM_prefix_sum/2048 alone\n",
              timing.at("speedup").at("median").get<double>());

  // Named by the user: a profile still says which entries it drives.
  c.shell = "BENCHMARK_MIN_TIME=0.02 " + std::string(MAXCODE_BINARY) + " optimize " + (dir / "repo").string() +
            " --function prefix_sum --out " + (dir / "named").string();
  const Outcome named = run(c);
  ASSERT_EQ(named.exit_code, 0) << named.out << named.err;
  EXPECT_NE(named.err.find("timing only the entries the target drives: BM_prefix_sum/2048"), std::string::npos)
      << named.err;
  const json again = json::parse(read_text(dir / "named/result.json"));
  EXPECT_EQ(again.at("candidates").at(0).at("timing").at("entries").size(), 1u);

  // Named in `maxcode run`'s input: the job profiles once and times the target on its
  // entry too (job.json keeps the entries per target).
  copy_tree(dir / "repo", dir / "git");
  Command git;
  git.shell = "cd " + (dir / "git").string() +
              " && git init -q && git add -A && git -c user.name=t -c user.email=t@example.com commit -qm fixture";
  ASSERT_EQ(run(git).exit_code, 0);
  c.shell = "BENCHMARK_MIN_TIME=0.02 " + std::string(MAXCODE_BINARY) + " run " + (dir / "git").string() +
            " --target prefix_sum --deliver none --out " + (dir / "run").string();
  const Outcome job = run(c);
  ASSERT_EQ(job.exit_code, 0) << job.out << job.err;
  const json record = json::parse(read_text(dir / "run/job.json"));
  EXPECT_EQ(record.at("targets").at(0).at("benchmark_entries"), json::parse(R"({"prefix": ["BM_prefix_sum/2048"]})"))
      << record.dump(2);
  EXPECT_NE(job.err.find("timing only the entries the target drives: BM_prefix_sum/2048"), std::string::npos)
      << job.err;
}

}  // namespace
}  // namespace maxcode
