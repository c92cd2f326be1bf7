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
#include "support/fixture_repo.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// One `maxcode optimize --policy replay` over examples/<name> and its replay/ candidates,
// made once for a suite: its result.json (null when there is none) and how it ended.
struct ExampleRun {
  TempDir dir;
  Outcome outcome;
  nlohmann::json result;
};

ExampleRun* optimize_example(const std::string& name, const char* tag) {
  auto* r = new ExampleRun;
  // The verdicts come from the call check and the records compared in every timed
  // round, not from a narrow interval: the short timing (at most 30 rounds) will do.
  testing::copy_example_with_short_timing(name, r->dir / "repo");
  std::error_code ignored;
  fs::remove_all(r->dir / "repo" / "build", ignored);
  Command c;
  c.shell = std::string(MAXCODE_BINARY) + " optimize " + (r->dir / "repo").string() + " --policy replay --replay-dir " +
            testing::source_path("examples/" + name + "/replay").string() + " --out " + (r->dir / "out").string() +
            " -q";
  c.timeout_s = 1200;
  r->outcome = run(c);
  if (fs::exists(r->dir / "out" / "result.json"))
    r->result = nlohmann::json::parse(read_text(r->dir / "out" / "result.json"));
  // Each verdict with its reason, for the record (the tests judge them).
  if (r->result.is_object())
    for (const auto& candidate : r->result["candidates"])
      std::printf("%-6s %-28s %-12s %s\n", tag, candidate.value("id", "").c_str(), candidate.value("verdict", "").c_str(),
                  candidate.value("reason", "").substr(0, 220).c_str());
  return r;
}

class PlainCheatSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    run_ = optimize_example("cpu-plain", "cheat");
    result_ = &run_->result;
  }
  static void TearDownTestSuite() {
    delete run_;
    run_ = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(result_->is_object()) << run_->outcome.describe() << "\n" << run_->outcome.err << run_->outcome.out;
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

  static ExampleRun* run_;
  static nlohmann::json* result_;
};

ExampleRun* PlainCheatSuite::run_ = nullptr;
nlohmann::json* PlainCheatSuite::result_ = nullptr;

TEST_F(PlainCheatSuite, CacheByPointerIsACache) {
  expect_rejected("01-cache-by-pointer.cpp", "rejected", {"call check", "per-call times: first", "caches its result"});
}

TEST_F(PlainCheatSuite, CacheByCallCountIsACache) {
  expect_rejected("02-first-call-only.cpp", "rejected", {"call check", "per-call times: first", "caches its result"});
}

// Keyed by pointer, length and a sample of the input: every call's input is perturbed,
// sparse calls keep the sample, so the cache hits on those. Its per-call times give it
// away first (costly calls where the key changed, trivial ones where it did not); where
// they would not, the stale outputs of those calls do.
TEST_F(PlainCheatSuite, CacheByContentIsSeenOnPerturbedInput) {
  const nlohmann::json c = candidate("03-cache-by-content.cpp");
  ASSERT_TRUE(c.is_object());
  const std::string verdict = c.value("verdict", ""), reason = c.value("reason", "");
  EXPECT_TRUE(verdict == "rejected" || verdict == "incorrect") << verdict << ": " << reason;
  EXPECT_NE(reason.find("call check"), std::string::npos) << reason;
  if (verdict == "incorrect") EXPECT_NE(reason.find("on the same perturbed inputs"), std::string::npos) << reason;
  else EXPECT_NE(reason.find("skips the work on some calls"), std::string::npos) << reason;
}

TEST_F(PlainCheatSuite, WorkOnSomeCallsOnlyIsSkippedWork) {
  expect_rejected("04-every-fourth-call.cpp", "rejected", {"call check", "skips the work on some calls"});
}

// Recomputes an eighth of the rows after the first call: its calls are a fraction of the
// original's (per-call times), and what it leaves is the poison (outputs compared).
TEST_F(PlainCheatSuite, PartialOutputIsSkippedWorkOrLeavesThePoison) {
  const nlohmann::json c = candidate("05-partial-output.cpp");
  ASSERT_TRUE(c.is_object());
  const std::string verdict = c.value("verdict", ""), reason = c.value("reason", "");
  EXPECT_TRUE(verdict == "rejected" || verdict == "incorrect") << verdict << ": " << reason;
  EXPECT_NE(reason.find("call check"), std::string::npos) << reason;
  if (verdict == "incorrect") EXPECT_NE(reason.find("not written"), std::string::npos) << reason;
  else EXPECT_NE(reason.find("skips the work on some calls"), std::string::npos) << reason;
}

// The honest rewrite (06) under a memo that recomputes only when 2 ms have passed since
// its last computation: every call the shim records is preceded by milliseconds of the
// shim's own work, so the memo would always miss; the probe (a call on slightly changed
// inputs right before one call in eight) hands the recorded call the probe's result.
TEST_F(PlainCheatSuite, MemoByTimeOnTheRewriteIsSeenRightAfterAProbe) {
  const nlohmann::json c = candidate("07-memo-by-time-on-fast-path.cpp");
  ASSERT_TRUE(c.is_object());
  const std::string verdict = c.value("verdict", ""), reason = c.value("reason", "");
  EXPECT_EQ(verdict, "incorrect") << reason;
  EXPECT_NE(reason.find("right after a probe call"), std::string::npos) << reason;
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
  // 40 calls, one in eight preceded by a probe.
  EXPECT_NE(winner.value("call_check", "").find("5 of them right after a probe call"), std::string::npos)
      << winner.value("call_check", "");
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
  const std::string report = read_text(run_->dir / "out" / "report.md");
  EXPECT_NE(report.find("## Benchmark audit"), std::string::npos);
  EXPECT_NE(report.find("### Precision against the original"), std::string::npos);
}

// The issue-21 benchmark (examples/cpu-plain-bins): one input built once, the target
// called 8 times on it, only the last result printed, `uint32_t* bins` on the stack with
// no size in the signature nor in .maxcode.json. Memos keyed by a sample of the input
// were judged faster (37x, 66x confirmed, 115x) when the checked and the timed runs
// were different runs; now every timed run is checked, bins are found by how far the
// original writes, and no cheat may be faster; the honest rewrite still wins.
class PlainBinsSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    run_ = optimize_example("cpu-plain-bins", "bins");
    result_ = &run_->result;
  }
  static void TearDownTestSuite() {
    delete run_;
    run_ = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(result_->is_object()) << run_->outcome.describe() << "\n" << run_->outcome.err << run_->outcome.out;
  }
  static ExampleRun* run_;
  static nlohmann::json* result_;
};

ExampleRun* PlainBinsSuite::run_ = nullptr;
nlohmann::json* PlainBinsSuite::result_ = nullptr;

// The cheats are judged, never merely timed slow. The honest rewrite (about 1.3x on an
// idle machine) must pass every check; whether it is confirmed faster is a measurement
// (CI's loaded 2-core machine once saw it unconfirmed), so a missing winner is said, not
// failed. A winner, when there is one, must be the honest rewrite.
TEST_F(PlainBinsSuite, NoCheatIsFasterAndTheHonestRewriteIsChecked) {
  int judged = 0;
  const nlohmann::json* honest = nullptr;
  for (const auto& c : (*result_)["candidates"]) {
    const std::string id = c.value("id", ""), verdict = c.value("verdict", "");
    ++judged;
    if (id == "05-four-lanes.cpp") {
      honest = &c;
      continue;
    }
    EXPECT_NE(verdict, "faster") << id << ": " << c.value("reason", "");
    EXPECT_NE(verdict, "not-faster") << id << " must be caught, not merely slow: " << c.value("reason", "");
  }
  EXPECT_EQ(judged, 5);
  ASSERT_NE(honest, nullptr) << result_->dump(2).substr(0, 3000);
  const std::string honest_verdict = honest->value("verdict", "");
  EXPECT_TRUE(honest_verdict == "faster" || honest_verdict == "not-faster")
      << "the honest rewrite must pass its checks: " << honest_verdict << ": " << honest->value("reason", "");
  // bins was found (1024 bytes on the stack) and compared on every call.
  EXPECT_NE(honest->value("call_check", "").find("8 calls, per-call times alike, 8 recorded outputs"),
            std::string::npos)
      << honest->dump(2);
  const auto& winner = (*result_)["winner"];
  if (winner.is_object()) {
    EXPECT_EQ(winner.value("id", ""), "05-four-lanes.cpp");
  } else {
    std::printf("NOTE: the honest rewrite was not confirmed faster on this machine: %s (%s)\n", honest_verdict.c_str(),
                honest->value("reason", "").c_str());
  }
}

}  // namespace
}  // namespace maxcode
