#include "runner/search/policy.h"

#include <gtest/gtest.h>

#include <set>

#include "runner/search/method.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

using testing::TempDir;
using testing::write_file;

Knob knob(const std::string& name, std::vector<std::string> values, const std::string& original) {
  return Knob{name, "a.cc", 1, original, std::move(values)};
}

TEST(TunePolicy, SmallSpaceIsEnumeratedOnceWithoutTheOriginal) {
  auto policy = make_tune_policy({knob("A", {"1", "2", "4"}, "1"), knob("B", {"x", "y"}, "x")}, 32, 1);
  SearchState state;
  std::set<std::string> ids;
  for (auto batch = policy->propose(state, 4); !batch.empty(); batch = policy->propose(state, 4))
    for (const auto& c : batch) EXPECT_TRUE(ids.insert(c.id).second) << "proposed twice: " << c.id;
  EXPECT_EQ(ids.size(), 5u);  // 3 x 2 settings minus the original
  EXPECT_EQ(ids.count("A=1,B=x"), 0u);
  EXPECT_EQ(ids.count("A=4,B=y"), 1u);
}

TEST(TunePolicy, OriginalValueNotListedIsStillPartOfTheSpace) {
  auto policy = make_tune_policy({knob("A", {"2", "4"}, "3")}, 32, 1);
  SearchState state;
  auto batch = policy->propose(state, 10);
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch[0].knobs.at("A"), "2");
  EXPECT_EQ(batch[1].knobs.at("A"), "4");
}

TEST(TunePolicy, LargeSpaceSamplesThenSearchesAroundTheBest) {
  std::vector<std::string> values;
  for (int i = 0; i < 20; ++i) values.push_back(std::to_string(i));
  auto policy = make_tune_policy({knob("A", values, "0"), knob("B", values, "0")}, 10, 7);
  SearchState state;
  auto first = policy->propose(state, 5);  // half the budget: random
  ASSERT_EQ(first.size(), 5u);
  for (const auto& c : first) EXPECT_EQ(c.note, "random sample");
  // Make one of them the best so far; the next proposals are its neighbours.
  TrajectoryEntry best{1, first[2], {}};
  best.evaluation.verdict = Verdict::kFaster;
  state.trajectory.push_back(best);
  state.best = 0;
  auto next = policy->propose(state, 4);
  ASSERT_FALSE(next.empty());
  const int a = std::stoi(first[2].knobs.at("A")), b = std::stoi(first[2].knobs.at("B"));
  for (const auto& c : next) {
    EXPECT_EQ(c.note, "neighbour of the best setting");
    const int da = std::abs(std::stoi(c.knobs.at("A")) - a), db = std::abs(std::stoi(c.knobs.at("B")) - b);
    EXPECT_EQ(da + db, 1) << c.id;
  }
}

TEST(TunePolicy, NoKnobsIsAClearError) {
  try {
    make_tune_policy({}, 10, 1);
    FAIL();
  } catch (const PolicyError& e) {
    EXPECT_NE(std::string(e.what()).find("maxcode: tune"), std::string::npos);
  }
}

TEST(ReplayPolicy, FilesInNameOrderDefinitionsAndDiffs) {
  TempDir dir;
  write_file(dir / "b.diff", "--- a/src/x.cc\n+++ b/src/x.cc\n@@ -1 +1 @@\n-a\n+b\n");
  write_file(dir / "a.cpp", "int f() { return 2; }\n\n");
  write_file(dir / ".hidden", "ignored");
  auto policy = make_replay_policy(dir.path());
  SearchState state;
  auto batch = policy->propose(state, 10);
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch[0].id, "a.cpp");
  ASSERT_TRUE(batch[0].definition);
  EXPECT_EQ(*batch[0].definition, "int f() { return 2; }");
  EXPECT_EQ(batch[1].id, "b.diff");
  EXPECT_TRUE(batch[1].diff);
  EXPECT_TRUE(policy->propose(state, 10).empty());
}

// Issue 22: a resumed replay search started again from the first file, spent its budget
// on repeats and ended with no winner. After a resume it goes on after what was tried.
TEST(ReplayPolicy, AfterAResumeTheFilesAlreadyTriedAreNotProposedAgain) {
  TempDir dir;
  for (const char* name : {"01-a.cpp", "02-b.cpp", "03-c.cpp"}) write_file(dir / name, "int f() { return 1; }\n");
  auto policy = make_replay_policy(dir.path());
  SearchState state;
  TrajectoryEntry tried;
  tried.candidate.id = "01-a.cpp";
  state.trajectory = {tried};
  tried.candidate.id = "02-b.cpp";
  state.trajectory.push_back(tried);
  policy->resume(state);
  auto batch = policy->propose(state, 10);
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0].id, "03-c.cpp");
}

TEST(ReplayPolicy, MissingOrEmptyDirectoryIsAnError) {
  TempDir dir;
  EXPECT_THROW(make_replay_policy(dir / "missing"), PolicyError);
  EXPECT_THROW(make_replay_policy(dir.path()), PolicyError);
}

}  // namespace
}  // namespace maxcode

namespace maxcode {
namespace {

// Issue 24: a target that no replay file can change still had its original built and an
// A/A session timed. Now the files are read first: a definition of a unit function or a
// diff of the target's file reaches it; files that change other functions do not.
TEST(ReplayPolicy, WhetherAnyFileCanChangeTheTargetIsKnownBeforeAnythingIsBuilt) {
  testing::TempDir dir;
  testing::write_file(dir / "01-other.cc", "int other(int x) { return x; }\n");
  testing::write_file(dir / "02-other.diff",
                      "--- a/src/b.cc\n+++ b/src/b.cc\n@@ -1 +1 @@\n-int b() { return 1; }\n+int b() { return 2; }\n");
  EXPECT_FALSE(replay_reaches(dir.path(), {"scale", "scale_kernel"}, "src/a.cc"));
  Config config;
  config.search.policy = SearchPolicy::kReplay;
  const std::string why = why_nothing_reaches(config, "/repo", dir.path(), {"scale", "scale_kernel"}, "src/a.cc");
  EXPECT_NE(why.find("none of the candidate files in " + dir.path().string() +
                     " defines a function of its unit or changes src/a.cc"),
            std::string::npos)
      << why;
  // A helper of the unit, by name: reaches.
  testing::write_file(dir / "03-kernel.cu", "__global__ void scale_kernel(float* p) { p[0] = 2; }\n");
  EXPECT_TRUE(replay_reaches(dir.path(), {"scale", "scale_kernel"}, "src/a.cc"));
  std::filesystem::remove(dir / "03-kernel.cu");
  // A diff of the file, also under a prefix (a diff from the top of an enclosing tree).
  testing::write_file(dir / "04.diff",
                      "--- a/lib/src/a.cc\n+++ b/lib/src/a.cc\n@@ -1 +1 @@\n-int a() { return 1; }\n+int a() { return 2; }\n");
  EXPECT_TRUE(replay_reaches(dir.path(), {"scale"}, "src/a.cc"));
  // Other policies write for the target.
  config.search.policy = SearchPolicy::kMaxcode;
  EXPECT_EQ(why_nothing_reaches(config, "/repo", dir.path(), {"scale"}, "src/x.cc"), "");
}

}  // namespace
}  // namespace maxcode
