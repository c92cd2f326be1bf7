// The plain-benchmark cheat suite on a real GPU (ctest label `gpu`; skipped without
// one): `maxcode optimize --policy replay` over examples/cuda-plain, whose benchmark
// reuses one pair of device buffers and prints a checksum, with one candidate per
// work-skipping class (examples/cuda-plain/cheats-expected.json) and an honest
// shared-memory version. Every cheat must be rejected with its reason, and the honest
// candidate must win.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "runner/util/files.h"
#include "runner/util/process.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::source_path;
using testing::TempDir;
using testing::have_gpu;

TEST(PlainCheatSuiteGpu, EveryCheatIsRejectedAndTheHonestCandidateWins) {
  // Found first, so that a program carried to another machine fails here, naming the
  // path, rather than deep inside a run.
  const fs::path example = source_path("examples/cuda-plain");
  ASSERT_TRUE(fs::exists(example / ".maxcode.json"))
      << example << " not found: set MAXCODE_SOURCE_DIR to the checkout";
  if (!have_gpu()) GTEST_SKIP() << "no GPU here (nvidia-smi -L fails); example at " << example;
  TempDir dir;
  const json expected = json::parse(read_text(example / "cheats-expected.json"));
  copy_tree(example, dir / "repo");
  std::error_code ignored;
  fs::remove_all(dir / "repo" / "build", ignored);

  Command cmd;
  cmd.shell = shell_quote(testing::maxcode_binary().string()) + " optimize " + shell_quote((dir / "repo").string()) +
              " --policy replay --replay-dir " + shell_quote((example / "replay").string()) + " --out " +
              shell_quote((dir / "out").string()) + " -q";
  cmd.timeout_s = 1500;
  Outcome o = run(cmd);
  ASSERT_EQ(o.exit_code, 0) << o.tail(6000);
  const json result = json::parse(read_text(dir / "out/result.json"));

  std::map<std::string, json> by_id;
  for (const json& c : result.at("candidates")) by_id[c.at("id").get<std::string>()] = c;
  for (const auto& [name, want] : expected.items()) {
    ASSERT_TRUE(by_id.count(name)) << name << " was not evaluated";
    const std::string verdict = by_id[name].at("verdict"), reason = by_id[name].at("reason");
    std::printf("cheat  %-34s %-10s %s\n", name.c_str(), verdict.c_str(), reason.substr(0, 200).c_str());
    EXPECT_EQ(verdict, want.at("verdict").get<std::string>()) << name << ": " << reason;
    EXPECT_NE(reason.find(want.at("reason").get<std::string>()), std::string::npos) << name << ": " << reason;
  }
  ASSERT_TRUE(result.at("winner").is_object()) << result.dump(2).substr(0, 4000);
  EXPECT_EQ(result["winner"].at("id"), "05-rows-per-thread.cu");
  std::printf("winner %s %.3fx\n", result["winner"]["id"].get<std::string>().c_str(),
              result["winner"]["speedup"]["median"].get<double>());
  if (const char* keep = std::getenv("MAXCODE_GPU_TEST_OUT")) {
    fs::create_directories(fs::path(keep) / "plain-cheat-suite");
    for (const char* file : {"result.json", "report.md"})
      fs::copy_file(dir / "out" / file, fs::path(keep) / "plain-cheat-suite" / file,
                    fs::copy_options::overwrite_existing);
  }
}

}  // namespace
}  // namespace maxcode
