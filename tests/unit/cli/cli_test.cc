// The `maxcode` command as a user runs it: exit codes, error messages, output files,
// and a patch that `git apply` accepts on the original.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "runner/util/files.h"
#include "runner/util/process.h"
#include "runner/workspace/source_extent.h"
#include "support/fixture_repo.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

using testing::TempDir;
using testing::write_file;
namespace fs = std::filesystem;

Outcome maxcode(const std::string& args, const fs::path& cwd = fs::current_path()) {
  Command c;
  c.shell = std::string(MAXCODE_BINARY) + " " + args;
  c.cwd = cwd.string();
  c.timeout_s = 300;
  return run(c);
}

fs::path fixture_copy(const TempDir& dir) {
  copy_tree(testing::source_path("tests/fixtures/sum"), dir / "repo");
  return dir / "repo";
}

TEST(Cli, HelpOnEveryCommand) {
  for (const std::string command : {"optimize ", "eval "}) {
    Outcome o = maxcode(command + "--help");
    EXPECT_EQ(o.exit_code, 0) << command;
    EXPECT_NE(o.out.find("--out"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("--function"), std::string::npos) << o.out;
  }
  EXPECT_NE(maxcode("--help").out.find("optimize"), std::string::npos);
}

TEST(Cli, UsageErrorsExitWithTwo) {
  EXPECT_EQ(maxcode("").exit_code, 2);
  EXPECT_EQ(maxcode("optimize --no-such-flag").exit_code, 2);
  EXPECT_EQ(maxcode("optimize --policy magic").exit_code, 2);
  EXPECT_EQ(maxcode("eval --function f").exit_code, 2);  // no --candidate
}

TEST(Cli, BadConfigNamesTheFileAndField) {
  TempDir dir;
  const fs::path repo = fixture_copy(dir);
  std::string config = read_text(repo / ".maxcode.json");
  config.replace(config.find("\"timeout_s\": 60"), 15, "\"timeout_s\": \"60\"");
  write_text(repo / ".maxcode.json", config);
  Outcome o = maxcode("optimize " + repo.string() + " --out " + (dir / "out").string());
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.err.find(".maxcode.json"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("build.timeout_s"), std::string::npos) << o.err;
}

TEST(Cli, MissingFunctionIsASetupError) {
  TempDir dir;
  const fs::path repo = fixture_copy(dir);
  Outcome o = maxcode("optimize " + repo.string() + " --function no_such_fn --out " + (dir / "out").string());
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.err.find("no definition of 'no_such_fn'"), std::string::npos) << o.err;
}

TEST(Cli, ReplayWritesAllOutputsAndAPatchThatApplies) {
  TempDir dir;
  const fs::path repo = fixture_copy(dir);
  write_file(dir / "replay/1-one-pass.cpp",
             "long long sum_squares(const int* v, int n) {\n  long long s = 0;\n"
             "  for (int i = 0; i < n; ++i) s += square(v[i]);\n  return s;\n}\n");
  write_file(dir / "replay/2-wrong.cpp",
             "long long sum_squares(const int* v, int n) {\n  long long s = 0;\n"
             "  for (int i = 0; i < n; ++i) s += square(v[i]);\n  return n > 1000 ? s + 1 : s;\n}\n");
  write_file(dir / "replay/3-no-compile.cpp", "long long sum_squares(const int* v, int n) { return ; }\n");
  const fs::path out = dir / "out";
  Outcome o = maxcode("optimize " + repo.string() + " --policy replay --replay-dir " + (dir / "replay").string() +
                      " --out " + out.string());
  ASSERT_EQ(o.exit_code, 0) << o.err;

  auto result = nlohmann::json::parse(read_text(out / "result.json"));
  ASSERT_EQ(result["candidates"].size(), 3u);
  EXPECT_EQ(result["candidates"][0]["id"], "1-one-pass.cpp");
  EXPECT_EQ(result["candidates"][1]["verdict"], "incorrect");
  EXPECT_EQ(result["candidates"][2]["verdict"], "compile-error");
  EXPECT_TRUE(result["candidates"][2]["speedup"].is_null());
  ASSERT_FALSE(result["winner"].is_null()) << result.dump(2);  // 16 passes -> 1
  EXPECT_EQ(result["winner"]["id"], "1-one-pass.cpp");
  EXPECT_GT(result["winner"]["speedup"]["low"].get<double>(), 1.05);

  const std::string report = read_text(out / "report.md");
  EXPECT_NE(report.find("Winner: `1-one-pass.cpp`"), std::string::npos);
  EXPECT_NE(report.find("2-wrong.cpp"), std::string::npos);
  std::size_t lines = 0;
  for (char c : read_text(out / "trajectory.jsonl")) lines += c == '\n';
  EXPECT_EQ(lines, 3u);

  Command apply;
  apply.shell = "git apply --check " + (out / "patch.diff").string() + " && git apply " + (out / "patch.diff").string();
  apply.cwd = repo.string();
  Outcome applied = run(apply);
  ASSERT_TRUE(applied.ok()) << applied.tail();
  EXPECT_NE(read_text(repo / "src/sum.cpp").find("s += square(v[i]);\n  return s;"), std::string::npos);
}

// What a policy needs is checked before anything is built or timed: each of these ends
// at once with the field to set, and no A/A (it once came after 135 s of baseline).
TEST(Cli, APolicyWithoutWhatItNeedsFailsBeforeTheBaseline) {
  TempDir dir;
  const fs::path repo = fixture_copy(dir);
  const std::string out = " --out " + (dir / "out").string();
  auto expect_early_error = [&](const std::string& args, const std::string& says) {
    Outcome o = maxcode("optimize " + repo.string() + args + out);
    EXPECT_EQ(o.exit_code, 1) << args << "\n" << o.err;
    EXPECT_NE(o.err.find(says), std::string::npos) << args << "\n" << o.err;
    EXPECT_EQ(o.err.find("A/A"), std::string::npos) << args << "\n" << o.err;
    EXPECT_FALSE(fs::exists(dir / "out/result.json")) << args;
  };
  expect_early_error(" --policy replay", "the replay policy needs a directory: --replay-dir or search.replay_dir");
  fs::create_directories(dir / "empty");
  expect_early_error(" --policy replay --replay-dir " + (dir / "empty").string(), "holds no candidate files");
  expect_early_error(" --policy maxcode", "the maxcode policy needs a model: set llm.propose");

  // A hosted model without its key.
  std::string config = read_text(repo / ".maxcode.json");
  const std::string with_llm = config.substr(0, config.rfind('}')) +
                               ",\n  \"llm\": {\"propose\": {\"provider\": \"openai\", \"model\": \"gpt-4.1\", "
                               "\"api_key_env\": \"MAXCODE_TEST_UNSET_KEY\"}}\n}\n";
  write_text(repo / ".maxcode.json", with_llm);
  expect_early_error(" --policy maxcode", "MAXCODE_TEST_UNSET_KEY");

  // tune without a knob anywhere in the repository.
  write_text(repo / ".maxcode.json", config);
  std::string source = read_text(repo / "src/sum.cpp");
  const std::string knob = "// maxcode: tune PASSES 16 4 1";
  ASSERT_NE(source.find(knob), std::string::npos);
  source.replace(source.find(knob), knob.size(), "");
  write_text(repo / "src/sum.cpp", source);
  expect_early_error(" --policy tune", "the tune policy has nothing to tune");
}

// `maxcode run PATH --dry-run` on a local repository: no GitHub repository needed, and
// replay candidates kept inside the scope are not taken for more definitions of the target.
TEST(Cli, ALocalDryRunWithReplayCandidatesInsideTheRepositoryWritesThePr) {
  TempDir dir;
  const fs::path repo = fixture_copy(dir);
  write_file(repo / "src/replay/1-one-pass.cpp",
             "long long sum_squares(const int* v, int n) {\n  long long s = 0;\n"
             "  for (int i = 0; i < n; ++i) s += square(v[i]);\n  return s;\n}\n");
  Command git;
  git.shell = "git init -q && git add -A && git -c user.name=t -c user.email=t@example.com commit -qm fixture";
  git.cwd = repo.string();
  ASSERT_TRUE(run(git).ok());
  const fs::path out = dir / "out";
  Command c;
  c.shell = std::string(MAXCODE_BINARY) + " run " + repo.string() +
            " --target sum_squares --policy replay --replay-dir src/replay --dry-run --out " + out.string();
  c.timeout_s = 600;
  Outcome o = run(c);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err.find("ambiguous"), std::string::npos) << o.err;
  const nlohmann::json job = nlohmann::json::parse(read_text(out / "job.json"));
  ASSERT_EQ(job["targets"].size(), 1u) << job.dump(2);
  const nlohmann::json& t = job["targets"][0];
  EXPECT_EQ(t["status"], "done") << t.dump(2);
  // On a busy machine an honest 16x can still fail to confirm: then no PR, and it says so.
  if (t["verdict"] == "winner") {
    EXPECT_EQ(t["pr"]["outcome"], "dry-run") << t.dump(2);
    const fs::path result = out / t["result_dir"].get<std::string>();
    EXPECT_TRUE(fs::exists(result / "pr-body.md"));
    EXPECT_NE(read_text(result / "pr-title.txt").find("sum_squares"), std::string::npos);
  } else {
    EXPECT_EQ(t["no_pr"], "no winner") << t.dump(2);
  }
}

TEST(Cli, EvalOfTheOriginalIsNotSignificant) {
  TempDir dir;
  const fs::path repo = fixture_copy(dir);
  const std::string original = read_text(repo / "src/sum.cpp");
  const auto begin = original.find("long long sum_squares(const int* v, int n) {");
  write_file(dir / "same.cpp", original.substr(begin));
  Outcome o = maxcode("eval " + repo.string() + " --function sum_squares --candidate " + (dir / "same.cpp").string() +
                      " --out " + (dir / "out").string());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  auto result = nlohmann::json::parse(read_text(dir / "out/result.json"));
  ASSERT_EQ(result["candidates"].size(), 1u);
  EXPECT_EQ(result["candidates"][0]["verdict"], "not-faster") << result["candidates"][0]["reason"];
  EXPECT_TRUE(result["winner"].is_null());
  EXPECT_FALSE(fs::exists(dir / "out/patch.diff"));
}

// examples/cpu-unit: the hot function spends its time in a static helper of its file.
// The unit is both; a candidate that rewrites the helper in place, under its own name,
// is built (no "redefinition of") and confirmed faster; one that redefines a function
// outside the unit is rejected before anything is built.
TEST(Cli, UnitHelperRewrittenInPlaceIsConfirmedFaster) {
  TempDir dir;
  const fs::path repo = dir / "repo";
  testing::copy_example_with_short_timing("cpu-unit", repo);
  const fs::path out = dir / "out";
  Outcome o = maxcode("optimize " + repo.string() + " --policy replay --replay-dir " +
                      (repo / "replay").string() + " --out " + out.string());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("unit: block_checksums, crc32_byte"), std::string::npos) << o.err;

  auto result = nlohmann::json::parse(read_text(out / "result.json"));
  EXPECT_EQ(result["target"]["unit"], nlohmann::json::parse(R"(["block_checksums", "crc32_byte"])"));
  ASSERT_EQ(result["candidates"].size(), 2u) << result.dump(2);
  const auto& in_place = result["candidates"][0];
  EXPECT_EQ(in_place["id"], "01-table-helper-in-place.cpp");
  EXPECT_EQ(in_place["verdict"], "faster") << in_place["reason"];
  const auto& outside = result["candidates"][1];
  EXPECT_EQ(outside["verdict"], "rejected");
  const std::string reason = outside["reason"];
  EXPECT_NE(reason.find("the candidate defines 'crc32', which is outside the unit of 'block_checksums'"),
            std::string::npos)
      << reason;
  EXPECT_NE(reason.find("add it to targets.unit.add"), std::string::npos) << reason;

  ASSERT_FALSE(result["winner"].is_null()) << result.dump(2);
  EXPECT_EQ(result["winner"]["id"], "01-table-helper-in-place.cpp");
  std::printf("cpu-unit: helper rewritten in place, confirmed %.2fx [%.2f, %.2f]\n",
              result["winner"]["speedup"]["median"].get<double>(), result["winner"]["speedup"]["low"].get<double>(),
              result["winner"]["speedup"]["high"].get<double>());
  EXPECT_GT(result["winner"]["speedup"]["low"].get<double>(), 1.05);

  // The patch rewrites the helper where it stood, and the example still builds with it.
  Command apply;
  apply.shell = "git apply " + (out / "patch.diff").string();
  apply.cwd = repo.string();
  Outcome applied = run(apply);
  ASSERT_TRUE(applied.ok()) << applied.tail();
  const std::string patched = read_text(repo / "src/checksum.cpp");
  EXPECT_LT(patched.find("make_crc_table"), patched.find("static std::uint32_t crc32_byte"));
  EXPECT_LT(patched.find("static std::uint32_t crc32_byte"), patched.find("std::uint32_t crc32(const"));
  EXPECT_EQ(find_definitions(patched, "crc32_byte").size(), 1u);
}

}  // namespace
}  // namespace maxcode
