#include "runner/search/checkpoint.h"

#include <gtest/gtest.h>

#include "runner/util/files.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

TEST(Checkpoint, RoundTripsTheSearchState) {
  testing::TempDir dir;
  Checkpoint c;
  c.run_id = "r1";
  c.policy = "maxcode";
  c.target = Target{"src/a.cc", "f", "int f()", 3, 9};
  TrajectoryEntry e;
  e.step = 2;
  e.candidate.id = "maxcode-1";
  e.candidate.definition = "int f() { return 1; }";
  e.candidate.tokens = 120;
  e.evaluation.candidate_id = "maxcode-1";
  e.evaluation.verdict = Verdict::kFaster;
  e.evaluation.critique = "memory bound";
  Timing t;
  t.baseline_s = {2, 2};
  t.candidate_s = {1, 1};
  t.speedup = {2.0, 1.9, 2.1, 2};
  t.significant = true;
  e.evaluation.timing = t;
  c.state.trajectory = {e};
  c.state.best = 0;
  c.state.evaluations = 1;
  c.spend = {{"tokens", 120}};
  write_checkpoint(dir.path(), c);
  Checkpoint back = read_checkpoint(dir.path());
  EXPECT_EQ(back.run_id, "r1");
  EXPECT_EQ(back.policy, "maxcode");
  EXPECT_EQ(back.target.function, "f");
  ASSERT_EQ(back.state.trajectory.size(), 1u);
  EXPECT_EQ(*back.state.trajectory[0].candidate.definition, "int f() { return 1; }");
  EXPECT_EQ(back.state.trajectory[0].evaluation.verdict, Verdict::kFaster);
  EXPECT_EQ(back.state.trajectory[0].evaluation.critique, "memory bound");
  EXPECT_DOUBLE_EQ(back.state.trajectory[0].evaluation.reward(), 2.0);
  EXPECT_EQ(*back.state.best, 0u);
  EXPECT_FALSE(std::filesystem::exists(dir / "checkpoint.json.tmp"));
}

TEST(Checkpoint, MissingOrDamagedIsAClearError) {
  testing::TempDir dir;
  EXPECT_THROW(read_checkpoint(dir.path()), std::runtime_error);
  testing::write_file(dir / "checkpoint.json", "{\"schema\": \"maxcode.checkpoint/1\", \"run_id\": 3}");
  try {
    read_checkpoint(dir.path());
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("damaged checkpoint"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace maxcode
