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
  c.repository = "/work/repo";
  c.config_file = "/work/repo/.maxcode.json";
  c.replay_dir = "/work/replay";
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
  // What `--resume DIR` alone takes (issue 22).
  EXPECT_EQ(back.repository, "/work/repo");
  EXPECT_EQ(back.config_file, "/work/repo/.maxcode.json");
  EXPECT_EQ(back.replay_dir, "/work/replay");
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

// Bytes that are not UTF-8 in a candidate's code and in its compiler's and tests'
// output (issue 22, point 8): the checkpoint is written (each such byte as U+FFFD) and
// read back, where a plain dump() threw type_error.316 and ended the run.
TEST(Checkpoint, OutputThatIsNotUtf8IsWrittenAndReadBack) {
  testing::TempDir dir;
  Checkpoint c;
  c.run_id = "r1";
  c.policy = "replay";
  c.target = Target{"src/a.cc", "f", "int f()", 3, 9};
  TrajectoryEntry e;
  e.step = 1;
  e.candidate.id = "bytes.cpp";
  e.candidate.definition = "int f() { return \"\xff\"[0]; }";
  e.evaluation.candidate_id = "bytes.cpp";
  e.evaluation.verdict = Verdict::kCompileError;
  e.evaluation.reason = "build failed: \xfe\xc3";
  e.evaluation.compiler_output = "error: \x80\x81";
  e.evaluation.test_output = "\xed\xa0\x80";
  e.evaluation.steps.push_back({"build", "c++", "exit code 1", 0.5, "tail \xff"});
  c.state.trajectory = {e};
  c.state.evaluations = 1;
  write_checkpoint(dir.path(), c);
  const Checkpoint back = read_checkpoint(dir.path());
  ASSERT_EQ(back.state.trajectory.size(), 1u);
  const Evaluation& ev = back.state.trajectory[0].evaluation;
  EXPECT_EQ(ev.reason, "build failed: \xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(ev.compiler_output, "error: \xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(*back.state.trajectory[0].candidate.definition, "int f() { return \"\xEF\xBF\xBD\"[0]; }");
}

TEST(Checkpoint, HostileFileIsAClearError) {
  testing::TempDir dir;
  testing::write_file(dir / "checkpoint.json", std::string(100'000, '[') + std::string(100'000, ']'));
  try {
    read_checkpoint(dir.path());
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("checkpoint.json: [0][0]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("nested deeper than 512 levels (cannot resume from it)"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace maxcode
