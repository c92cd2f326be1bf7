// The plain-benchmark cheat suite on a real GPU (ctest label `gpu`; skipped without
// one): `maxcode optimize --policy replay` over examples/cuda-plain, whose benchmark
// reuses one pair of device buffers and prints a checksum, with one candidate per
// cheat class (examples/cuda-plain/cheats-expected.json: work skipped, and work hidden
// from the in-process timer) and an honest rows-per-thread version. Every cheat must get
// its expected verdict with its reason, and the honest candidate must win. The
// expectations themselves are checked without a GPU.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/core/evaluation.h"
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

// An expectation's "verdict" or "reason": one string, or an array of alternatives of
// which any one will do (a verdict equal to it, a reason containing it).
std::vector<std::string> alternatives(const json& field) {
  if (field.is_string()) return {field.get<std::string>()};
  std::vector<std::string> out;
  for (const json& one : field) out.push_back(one.get<std::string>());
  return out;
}

bool verdict_matches(const json& want, const std::string& verdict) {
  for (const std::string& v : alternatives(want))
    if (verdict == v) return true;
  return false;
}

bool reason_matches(const json& want, const std::string& reason) {
  for (const std::string& part : alternatives(want))
    if (reason.find(part) != std::string::npos) return true;
  return false;
}

TEST(PlainCheatSuite, ExpectationsAreWellFormedAndCoverEveryCheat) {
  const fs::path example = source_path("examples/cuda-plain");
  const json expected = json::parse(read_text(example / "cheats-expected.json"));
  std::set<std::string> candidates;
  for (const auto& entry : fs::directory_iterator(example / "replay")) candidates.insert(entry.path().filename());
  for (const auto& [name, want] : expected.items()) {
    EXPECT_TRUE(candidates.count(name)) << name << " in cheats-expected.json has no file in replay/";
    for (const char* field : {"verdict", "reason"}) {
      ASSERT_TRUE(want.contains(field)) << name << ": no \"" << field << "\"";
      const json& f = want.at(field);
      ASSERT_TRUE(f.is_string() || (f.is_array() && !f.empty()))
          << name << "." << field << ": expected a string or a non-empty array of strings";
      for (const json& one : f.is_array() ? f : json::array({f})) {
        ASSERT_TRUE(one.is_string() && !one.get<std::string>().empty())
            << name << "." << field << ": expected non-empty strings";
        if (std::string(field) == "verdict") EXPECT_NO_THROW(verdict_from_name(one.get<std::string>())) << name;
      }
    }
    EXPECT_FALSE(verdict_matches(want.at("verdict"), "faster")) << name << ": a cheat may not be expected to win";
  }
  // Every candidate but the honest winner is a cheat with an expectation.
  for (const std::string& name : candidates)
    if (name != "05-rows-per-thread.cu") EXPECT_TRUE(expected.contains(name)) << name << " has no expectation";
  EXPECT_TRUE(verdict_matches(json::array({"not-faster", "rejected"}), "rejected"));
  EXPECT_FALSE(verdict_matches("rejected", "not-faster"));
  EXPECT_TRUE(reason_matches(json::array({"warm-up", "not timed"}), "the work is done in launches that are not timed"));
  EXPECT_FALSE(reason_matches("CUDA IPC", "per-call consistency: ..."));
}

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
    EXPECT_TRUE(verdict_matches(want.at("verdict"), verdict))
        << name << ": verdict " << verdict << ", expected " << want.at("verdict").dump() << "; " << reason;
    EXPECT_TRUE(reason_matches(want.at("reason"), reason))
        << name << ": reason has none of " << want.at("reason").dump() << ": " << reason;
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
