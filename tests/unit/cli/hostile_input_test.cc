// Hostile inputs to the `maxcode` program (issue 22, points 8 and 9): each is a clear
// error naming what was wrong, with an exit code; never a signal, a hang or a run that
// ends without its result.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "runner/util/files.h"
#include "runner/util/process.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

using testing::TempDir;
using testing::write_file;
namespace fs = std::filesystem;

Outcome maxcode(const std::string& args, double timeout_s = 60) {
  Command c;
  c.shell = std::string(MAXCODE_BINARY) + " " + args;
  c.timeout_s = timeout_s;
  c.output_cap = 1 << 20;
  return run(c);
}

// `maxcode check-input --kind KIND FILE` with `content` as the file: exits 1 and says
// `expected` on stderr, without a signal or a hang.
void expect_rejected(const std::string& kind, const std::string& content, const std::string& expected) {
  TempDir dir;
  const fs::path file = dir / "input";
  write_file(file, content);
  const Outcome o = maxcode("check-input --kind " + kind + " " + file.string());
  EXPECT_EQ(o.term_signal, 0) << kind << ": killed by signal " << o.term_signal;
  EXPECT_FALSE(o.timed_out) << kind;
  EXPECT_EQ(o.exit_code, 1) << kind << ": " << o.out.substr(0, 300) << o.err.substr(0, 300);
  EXPECT_NE(o.err.find(file.string() + ": " + expected), std::string::npos)
      << kind << ": expected \"" << expected << "\" in:\n" << o.err.substr(0, 600);
  EXPECT_LT(o.err.size(), 4000u) << kind << ": the message quotes too much";
}

Outcome check(const std::string& kind, const std::string& content) {
  TempDir dir;
  write_file(dir / "input", content);
  return maxcode("check-input --kind " + kind + " " + (dir / "input").string());
}

const char* kConfigHead = R"({"build": {"command": "make"}, "test": {"command": "make test"},
  "benchmarks": [{"name": "main", "command": "./bench"}])";

std::string deep(std::size_t levels) { return std::string(levels, '[') + std::string(levels, ']'); }

TEST(HostileInput, ConfigsAreErrorsNamingTheField) {
  const std::string head = kConfigHead;
  expect_rejected("config", head + R"(, "search": {"max_wall_s": 1e400}})",
                  "search.max_wall_s: number out of range: 1e400");
  expect_rejected("config", head + R"(, "search": {"seed": 1, "seed": 2}})",
                  "search.seed: duplicate key \"seed\" (each field once)");
  expect_rejected("config", head + R"(, "llm": )" + deep(1'000'000) + "}", "llm[0][0][0][0][0]...[0][0][0][0]: nested deeper than 512 levels");
  expect_rejected("config", head + R"(, "targets": {"functions": ["f"], "unit": {"add": [")" +
                                std::string(60'000, 'a') + "-b\"]}}}",
                  "targets.unit.add[0]: must be a function name (qualified allowed: ns::fn), got 'aaaa");
  std::string product;
  for (int i = 0; i < 30'000; ++i) product += "n * ";
  expect_rejected("config", head + R"(, "targets": {"functions": ["f"], "interface": {"out": ")" + product + "\"}}}",
                  "targets.interface.out: must be a product of parameter names and whole numbers");
  expect_rejected("config", head + R"(, "search": {"replay_dir": "../../elsewhere"}})",
                  "search.replay_dir: must stay inside the repository ('..' climbs out of it)");
  expect_rejected("config", "{\"" + std::string(50'000'000, 'k') + "\": 1}", "kkkkkkkkkk");
  expect_rejected("config", head + ", \"test2\": \"\xff\"}", "invalid JSON at line 2, column");
  // And a good one is read.
  const Outcome ok = check("config", head + "}");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("ok: 1 benchmark(s)"), std::string::npos) << ok.out;
}

TEST(HostileInput, JobDocumentsAreErrorsNamingTheField) {
  expect_rejected("job", deep(1'000'000), "[0][0][0][0][0][0]...[0][0][0][0]: nested deeper than 512 levels");
  expect_rejected("job", R"({"repository": "a", "repository": "/etc"})", "repository: duplicate key \"repository\"");
  expect_rejected("job", R"({"repository": "r", "min_share": 1e999})", "min_share: number out of range: 1e999");
  expect_rejected("job", R"({"repository": "r", "budget": {"evaluations": 1e300}})",
                  "budget.evaluations: must be <= 2147483647, got 1e+300");
  expect_rejected("job", "{\"repository\": \"" + std::string(50'000'000, 'r') + "\"}",
                  "repository: at most 4096 bytes, got 50000000");
  expect_rejected("job", R"({"repository": "r", "config": "../../etc/maxcode.json"})",
                  "config: must stay inside the repository ('..' climbs out of it)");
  expect_rejected("job", R"({"repository": "r", "replay_dir": "replay/../../.."})",
                  "replay_dir: must stay inside the repository ('..' climbs out of it)");
  expect_rejected("job", R"({"repository": "r", "replay_dir": "/tmp/replay"})",
                  "replay_dir: must be relative to the repository root");
  expect_rejected("job", R"({"repository": "r", "targets": [)" + deep(500) + "]}",
                  "targets[0]: expected a non-empty string, got an array");
  const Outcome ok = check("job", R"({"repository": "https://user:pw@github.com/acme/histo.git", "config": "ci/./x.json"})");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("ok: repository https://github.com/acme/histo.git"), std::string::npos) << ok.out;
}

TEST(HostileInput, RepliesAndReplayFilesNeverCrash) {
  // A reranker reply of 200,000 digits, 1e999, and a 60,000-character #define.
  for (const std::string& reply : {std::string(200'000, '9'), std::string("1e999"), std::string("-1e999x"),
                                   "```cpp\n#define LANES " + std::string(60'000, '1') +
                                       "\nint target(const int* a, std::size_t n) { return 0; }\n```\n",
                                   std::string("```cpp\nint target(const int* a, std::size_t n) { return *\"\xff\xfe\"; }\n```\n")}) {
    const Outcome o = check("reply", reply);
    EXPECT_EQ(o.term_signal, 0);
    EXPECT_EQ(o.exit_code, 0) << o.err.substr(0, 300);
    EXPECT_NE(o.out.find("ok: estimate none"), std::string::npos) << o.out.substr(0, 300);
  }
  const Outcome estimate = check("reply", "About 2.5x, maybe 3");
  EXPECT_NE(estimate.out.find("ok: estimate 2.5"), std::string::npos) << estimate.out;

  const Outcome define = check("replay", "#define LANES " + std::string(60'000, '1') +
                                              "\nint target(const int* a, std::size_t n) { return 0; }\n");
  EXPECT_EQ(define.exit_code, 0) << define.err.substr(0, 300);
  EXPECT_NE(define.out.find("out of scope: src/target.cc:"), std::string::npos) << define.out.substr(0, 300);
  EXPECT_NE(define.out.find("`#define LANES 1111"), std::string::npos) << define.out.substr(0, 300);
  // Invalid UTF-8 in the code goes through the evaluation record and a checkpoint.
  const Outcome bytes = check("replay", "int target(const int* a, std::size_t n) { return \"\xff\xfe\xc3\"[0]; }\n");
  EXPECT_EQ(bytes.exit_code, 0) << bytes.err;
  EXPECT_NE(bytes.out.find("ok: in scope; checkpoint of"), std::string::npos) << bytes.out;
}

TEST(HostileInput, RunRejectsAHostileJobWithoutAbort) {
  TempDir dir;
  write_file(dir / "job.json", "{\"repository\": \"" + std::string(50'000'000, '/') + "\"}");
  Outcome o = maxcode("run --job " + (dir / "job.json").string() + " --out " + (dir / "out").string() + " -q");
  EXPECT_EQ(o.term_signal, 0);
  EXPECT_EQ(o.exit_code, 2) << o.err.substr(0, 300);
  EXPECT_NE(o.err.find("repository: at most 4096 bytes"), std::string::npos) << o.err.substr(0, 300);

  write_file(dir / "job2.json", R"({"repository": "/nowhere", "config": "../outside.json"})");
  o = maxcode("run --job " + (dir / "job2.json").string() + " --out " + (dir / "out2").string() + " -q");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("config: must stay inside the repository"), std::string::npos) << o.err;
  // The command line meets the same checks.
  o = maxcode("run /nowhere --replay-dir ../x --out " + (dir / "out3").string() + " -q");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("command line: replay_dir: must stay inside the repository"), std::string::npos) << o.err;
}

// Bytes that are not UTF-8 in a candidate's code, its compiler's output and its test's
// output: the run goes on and writes every result (it used to end with
// json.exception.type_error.316 and no result.json).
TEST(HostileInput, InvalidUtf8InOutputsStillGivesAResult) {
  TempDir dir;
  copy_tree(testing::source_path("tests/fixtures/sum"), dir / "repo");
  // The compiler quotes the bytes of the #error line.
  write_file(dir / "replay/1-compile-error.cpp",
             "long long sum_squares(const int* v, int n) {\n#error \"\xff\xfe bytes \xc3\"\n  return 0;\n}\n");
  // The tests print what the function printed, and fail.
  write_file(dir / "replay/2-prints-bytes.cpp",
             "long long sum_squares(const int* v, int n) {\n  __builtin_printf(\"\\xff\\xfe \\xc3\\n\");\n"
             "  __builtin_fprintf(stderr, \"\\xfe\\xff\\n\");\n  return -1; // \xe2\x82\n}\n");
  const fs::path out = dir / "out";
  const Outcome o = maxcode("optimize " + (dir / "repo").string() + " --policy replay --replay-dir " +
                                (dir / "replay").string() + " --out " + out.string(),
                            300);
  ASSERT_EQ(o.term_signal, 0);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const nlohmann::json result = nlohmann::json::parse(read_text(out / "result.json"));
  ASSERT_EQ(result["candidates"].size(), 2u);
  EXPECT_EQ(result["candidates"][0]["verdict"], "compile-error");
  EXPECT_NE(result["candidates"][1]["verdict"], "faster");
  EXPECT_NE(result.dump().find("\xEF\xBF\xBD"), std::string::npos);  // U+FFFD where the bytes were
  for (const char* file : {"checkpoint.json", "report.md", "trajectory.jsonl", "rollouts.sqlite"})
    EXPECT_TRUE(fs::exists(out / file)) << file;
  for (const std::string& line : [&] {
         std::vector<std::string> lines;
         std::string text = read_text(out / "trajectory.jsonl");
         for (std::size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1)
           lines.push_back(text.substr(at, nl - at));
         return lines;
       }())
    EXPECT_NO_THROW(nlohmann::json::parse(line));
  EXPECT_NO_THROW(nlohmann::json::parse(read_text(out / "checkpoint.json")));
  // And `export` reads the rollouts back into JSON lines.
  const Outcome exported =
      maxcode("export --db " + (out / "rollouts.sqlite").string() + " --out " + (dir / "export").string(), 60);
  EXPECT_EQ(exported.term_signal, 0);
  EXPECT_EQ(exported.exit_code, 0) << exported.err;
}

}  // namespace
}  // namespace maxcode
