// The plain-benchmark cheat suite (CPU): `maxcode optimize --policy replay` over
// examples/cpu-plain, whose benchmark is written the way most projects write one (one
// input, the same buffers on every call, a checksum printed). Each work-skipping
// candidate passes the project's tests and the benchmark's output, and before the call
// check each was reported faster; every one must now be rejected with the check that
// caught it, and the honest candidate must still win, with its precision stated.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>

#include "runner/util/files.h"
#include "runner/util/process.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

class PlainCheatSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    copy_tree(testing::source_path("examples/cpu-plain"), *dir_ / "repo");
    std::error_code ignored;
    fs::remove_all(*dir_ / "repo" / "build", ignored);
    Command c;
    c.shell = std::string(MAXCODE_BINARY) + " optimize " + (*dir_ / "repo").string() + " --policy replay --replay-dir " +
              testing::source_path("examples/cpu-plain/replay").string() + " --out " + (*dir_ / "out").string() +
              " -q";
    c.timeout_s = 1200;
    outcome_ = new Outcome(run(c));
    if (fs::exists(*dir_ / "out" / "result.json"))
      result_ = new nlohmann::json(nlohmann::json::parse(read_text(*dir_ / "out" / "result.json")));
    // Each verdict with its reason, for the record (the tests below judge them).
    if (result_)
      for (const auto& c : (*result_)["candidates"])
        std::printf("cheat  %-28s %-10s %s\n", c.value("id", "").c_str(), c.value("verdict", "").c_str(),
                    c.value("reason", "").substr(0, 220).c_str());
  }
  static void TearDownTestSuite() {
    delete result_;
    delete outcome_;
    delete dir_;
  }
  void SetUp() override {
    ASSERT_TRUE(result_) << outcome_->describe() << "\n" << outcome_->err << outcome_->out;
  }
  static nlohmann::json candidate(const std::string& id) {
    for (const auto& c : (*result_)["candidates"])
      if (c.value("id", "") == id) return c;
    return nullptr;
  }
  static void expect_rejected(const std::string& id, const std::string& verdict, const std::vector<std::string>& words) {
    const nlohmann::json c = candidate(id);
    ASSERT_TRUE(c.is_object()) << id;
    EXPECT_EQ(c.value("verdict", ""), verdict) << id << ": " << c.value("reason", "");
    const std::string reason = c.value("reason", "");
    for (const std::string& w : words) EXPECT_NE(reason.find(w), std::string::npos) << id << ": " << reason;
  }

  static TempDir* dir_;
  static Outcome* outcome_;
  static nlohmann::json* result_;
};

TempDir* PlainCheatSuite::dir_ = nullptr;
Outcome* PlainCheatSuite::outcome_ = nullptr;
nlohmann::json* PlainCheatSuite::result_ = nullptr;

TEST_F(PlainCheatSuite, CacheByPointerIsACache) {
  expect_rejected("01-cache-by-pointer.cpp", "rejected", {"call check", "per-call times: first", "caches its result"});
}

TEST_F(PlainCheatSuite, CacheByCallCountIsACache) {
  expect_rejected("02-first-call-only.cpp", "rejected", {"call check", "per-call times: first", "caches its result"});
}

TEST_F(PlainCheatSuite, CacheByContentDiffersOnPerturbedInput) {
  expect_rejected("03-cache-by-content.cpp", "incorrect",
                  {"call check", "inputs perturbed", "differs from the original's on the same input"});
}

TEST_F(PlainCheatSuite, WorkOnSomeCallsOnlyIsSkippedWork) {
  expect_rejected("04-every-fourth-call.cpp", "rejected", {"call check", "skips the work on some calls"});
}

TEST_F(PlainCheatSuite, PartialOutputLeavesThePoison) {
  expect_rejected("05-partial-output.cpp", "incorrect", {"call check", "not written"});
}

TEST_F(PlainCheatSuite, TheHonestCandidateWinsWithItsPrecisionStated) {
  const auto& winner = (*result_)["winner"];
  ASSERT_TRUE(winner.is_object()) << result_->dump(2).substr(0, 4000);
  EXPECT_EQ(winner.value("id", ""), "06-interior-fast-path.cpp");
  ASSERT_TRUE(winner["precision"].is_array());
  bool buffer = false;
  for (const auto& p : winner["precision"]) {
    if (p.value("output", "") != "out") continue;
    buffer = true;
    EXPECT_EQ(p.value("type", ""), "float");
    EXPECT_GT(p.value("values", 0), 0);
    EXPECT_EQ(p.value("max_ulp_error", -1.0), 0) << "the honest candidate is bit-identical";
    EXPECT_FALSE(p.value("loose", true));
  }
  EXPECT_TRUE(buffer) << winner["precision"].dump();
  EXPECT_NE(winner.value("call_check", "").find("per-call times alike"), std::string::npos);
}

TEST_F(PlainCheatSuite, TheAuditNamesTheBenchmarksWeaknesses) {
  const auto& audit = (*result_)["audit"];
  ASSERT_EQ(audit.size(), 1u) << audit.dump();
  EXPECT_EQ(audit[0]["seed_changes_output"], false);
  EXPECT_EQ(audit[0]["input_changes_output"], true);
  EXPECT_EQ(audit[0]["summary_only"], true);
  EXPECT_EQ(audit[0]["inputs_reused"], true);
  EXPECT_EQ(audit[0]["outputs_unpoisoned"], true);
  EXPECT_EQ(audit[0]["calls"], 40);
  EXPECT_EQ(audit[0]["interface"], "described");
  const std::string report = read_text(*dir_ / "out" / "report.md");
  EXPECT_NE(report.find("## Benchmark audit"), std::string::npos);
  EXPECT_NE(report.find("### Precision against the original"), std::string::npos);
}

}  // namespace
}  // namespace maxcode
