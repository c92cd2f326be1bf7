// The decision of the same-night regression check: every paired round slower (the
// history's rule adds the minimum growth: history_test). (The check end to end, building and
// profiling two commits, runs in tests/unit/cli/sweep_test.cc.)
#include <gtest/gtest.h>

#include "runner/job/regression_check.h"

namespace maxcode {
namespace {

RegressionCheck decided(std::vector<double> before, std::vector<double> after) {
  RegressionCheck c;
  c.before_ns = std::move(before);
  c.after_ns = std::move(after);
  decide_regression(c);
  return c;
}

TEST(RegressionCheck, EveryRoundSlowerConfirms) {
  const RegressionCheck c = decided({100, 102, 98, 101, 99}, {300, 290, 310, 305, 296});
  EXPECT_EQ(c.rounds, 5);
  EXPECT_TRUE(c.confirmed);
  EXPECT_NEAR(c.growth, 3.0, 0.05);
  EXPECT_LE(c.low, c.growth);
  EXPECT_GE(c.high, c.growth);
}

TEST(RegressionCheck, OneRoundNotSlowerIsNotConfirmed) {
  // Four rounds 3x slower, one as fast: a load burst on the earlier nights' side cannot
  // be told from a real change with five pairs, so no flag.
  const RegressionCheck c = decided({100, 102, 98, 101, 99}, {300, 290, 97, 305, 296});
  EXPECT_FALSE(c.confirmed);
  EXPECT_GT(c.growth, 2.5);
}

// The earlier commit's function, eight times shorter, went unsampled in one round (seen
// in CI): that round still shows the later commit slower; the growth rests on the rest.
TEST(RegressionCheck, ARoundUnsampledOnOneSideStillCounts) {
  RegressionCheck c = decided({100, 0, 98, 101, 99}, {800, 790, 810, 805, 796});
  EXPECT_EQ(c.rounds, 5);
  EXPECT_TRUE(c.confirmed);
  EXPECT_NEAR(c.growth, 8.0, 0.2);
  // Unsampled on the later side: that round is not slower.
  c = decided({100, 102, 98, 101, 99}, {800, 0, 810, 805, 796});
  EXPECT_FALSE(c.confirmed);
  // Never sampled on both sides: no check.
  c = decided({0, 0}, {800, 790});
  EXPECT_EQ(c.rounds, 0);
  EXPECT_FALSE(c.note.empty());
}

TEST(RegressionCheck, NoRoundsDecidesNothing) {
  const RegressionCheck c = decided({}, {});
  EXPECT_EQ(c.rounds, 0);
  EXPECT_FALSE(c.confirmed);
}

TEST(RegressionCheck, AFailedBuildIsANoteNotAnException) {
  RegressionCheckRequest request;
  request.repository = "/nonexistent/maxcode-repo";
  request.before_commit = "0123456789abcdef0123456789abcdef01234567";
  request.config = ".maxcode.json";
  request.functions = {{"sum_squares", "src/sum.cpp"}, {"dot", "src/dot.cpp"}};
  request.work_dir = std::filesystem::temp_directory_path() / "maxcode-regression-check-test";
  Progress progress(stderr, true);
  const std::vector<RegressionCheck> checks = check_regressions(request, progress);
  ASSERT_EQ(checks.size(), 2u);
  for (const RegressionCheck& c : checks) {
    EXPECT_EQ(c.rounds, 0);
    EXPECT_FALSE(c.confirmed);
    EXPECT_NE(c.note.find("/nonexistent/maxcode-repo"), std::string::npos) << c.note;
  }
  EXPECT_FALSE(std::filesystem::exists(request.work_dir));
}

}  // namespace
}  // namespace maxcode
