// The sweep's history store and the regression rule: a function's own time that grew
// beyond the profile's sampling error is flagged with the commits between the nights;
// growth within the noise, or too small to matter, is not.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "runner/store/history.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

NightResult night(const std::string& date, const std::string& target, double self_ms, std::uint64_t samples,
                  const std::string& commit) {
  NightResult r;
  r.night = date;
  r.repository = "https://example/acme.git";
  r.target = target;
  r.file = "src/sum.cpp";
  r.commit = commit;
  r.self_ns = self_ms * 1e6;
  r.samples = samples;
  r.original_s = self_ms / 1e3 * 1.5;
  r.original_rounds = {r.original_s * 0.99, r.original_s, r.original_s * 1.01};
  return r;
}

TEST(History, KeepsOneRowPerNightAndTargetAndFindsThePreviousCommit) {
  testing::TempDir dir;
  {
    HistoryStore store(dir / "history.sqlite");
    store.record(night("2026-11-01", "sum", 100, 100, "aaa"));
    NightResult second = night("2026-11-02", "sum", 100, 100, "bbb");
    second.speedup = 3.9;
    second.speedup_low = 3.7;
    second.speedup_high = 4.1;
    second.pr_number = 7;
    second.pr_url = "https://github.com/acme/x/pull/7";
    second.pr_state = "created";
    second.commits_since = {"bbb0000000 make it faster"};
    store.record(second);
    store.record(night("2026-11-02", "sum", 101, 100, "bbb"));  // the night again: replaced
    store.record(second);
  }
  HistoryStore store(dir / "history.sqlite");  // reopened: it persisted
  const auto rows = store.all();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].speedup, 3.9);
  EXPECT_EQ(rows[1].pr_number, 7);
  EXPECT_EQ(rows[1].commits_since, std::vector<std::string>{"bbb0000000 make it faster"});
  EXPECT_EQ(rows[0].original_rounds.size(), 3u);
  EXPECT_FALSE(rows[0].speedup);
  EXPECT_EQ(store.previous_commit("https://example/acme.git", "2026-11-03"), "bbb");
  EXPECT_EQ(store.previous_commit("https://example/acme.git", "2026-11-02"), "aaa");
  EXPECT_EQ(store.previous_commit("https://example/acme.git", "2026-11-01"), "");
}

TEST(History, FlagsGrowthBeyondTheSamplingErrorOnly) {
  std::vector<NightResult> rows = {night("2026-11-01", "sum", 100, 400, "a"), night("2026-11-02", "sum", 104, 400, "b"),
                                   night("2026-11-03", "sum", 300, 1200, "c"), night("2026-11-01", "dot", 50, 200, "a"),
                                   night("2026-11-02", "dot", 80, 4, "b")};
  rows[2].commits_since = {"ccc0000000 three times the passes"};
  rows[4].original_rounds = rows[3].original_rounds;  // dot: the benchmark as fast as before
  const auto found = find_regressions(rows);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].target, "sum");
  EXPECT_EQ(found[0].previous_night, "2026-11-02");
  EXPECT_EQ(found[0].night, "2026-11-03");
  EXPECT_NEAR(found[0].growth, 300.0 / 104, 1e-9);
  EXPECT_GT(found[0].z, 3);
  EXPECT_EQ(found[0].commits, rows[2].commits_since);
  // 4% more is below min_growth; dot's 1.6x rests on 4 samples: within the noise.
  RegressionRule lenient;
  lenient.min_growth = 0.01;
  lenient.min_z = 0.5;
  EXPECT_EQ(find_regressions(rows, lenient).size(), 3u);
}

TEST(History, FewSamplesButClearlySlowerRoundsCount) {
  NightResult a = night("2026-11-01", "sum", 100, 9, "a"), b = night("2026-11-02", "sum", 250, 20, "b");
  EXPECT_EQ(find_regressions({a, b}).size(), 1u);  // 2.3 standard errors only, but the rounds are apart
  b.original_rounds = a.original_rounds;
  EXPECT_EQ(find_regressions({a, b}).size(), 0u);  // the benchmark as fast as before: noise
}

TEST(History, WithoutSamplesTheTimedRoundsDecide) {
  NightResult a = night("2026-11-01", "sum", 100, 0, "a"), b = night("2026-11-02", "sum", 130, 0, "b");
  EXPECT_EQ(find_regressions({a, b}).size(), 1u);
  b.original_rounds.push_back(a.original_s * 0.9);  // one round as fast as before: not clear
  EXPECT_EQ(find_regressions({a, b}).size(), 0u);
}

RegressionCheck side_by_side(std::vector<double> before, std::vector<double> after, bool confirmed, double growth) {
  RegressionCheck c;
  c.rounds = static_cast<int>(before.size());
  c.before_ns = std::move(before);
  c.after_ns = std::move(after);
  c.confirmed = confirmed;
  c.growth = growth;
  c.low = growth;  // tight, unless a test says otherwise
  c.high = growth;
  return c;
}

TEST(History, TheSameNightCheckDecidesOverTheComparisonOfTwoNights) {
  // The screen flags 2.5x (the rounds are apart), as a busier machine on night 2 would.
  NightResult a = night("2026-11-01", "sum", 100, 9, "a"), b = night("2026-11-02", "sum", 250, 20, "b");
  ASSERT_EQ(find_regressions({a, b}).size(), 1u);
  b.check = side_by_side({100, 101, 99}, {100, 99, 102}, false, 1.0);  // side by side: no change
  EXPECT_EQ(find_regressions({a, b}).size(), 0u);
  b.check = side_by_side({100, 101, 99}, {180, 185, 179}, true, 1.8);
  const auto found = find_regressions({a, b});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_DOUBLE_EQ(found[0].growth, 1.8);  // the side-by-side growth, not the nights' 2.5x
  ASSERT_TRUE(found[0].check);
  EXPECT_NE(regression_evidence(found[0]).find("side by side the same night: 1.80x"), std::string::npos)
      << regression_evidence(found[0]);
  // Slower in every round, but by less than min_growth: too small to matter.
  b.check = side_by_side({100, 101, 99}, {104, 105, 103}, true, 1.04);
  EXPECT_EQ(find_regressions({a, b}).size(), 0u);
  // Slower in every round with a median of 18%, but an interval reaching down to 4%: a
  // docs-only commit on a loaded CI machine (seen: 1.18x [1.04, 1.78], 5 of 5 slower).
  b.check = side_by_side({100, 100, 100, 100, 100}, {104, 110, 118, 130, 178}, true, 1.18);
  b.check->low = 1.04;
  b.check->high = 1.78;
  EXPECT_EQ(find_regressions({a, b}).size(), 0u);
  // A check that could not be made (no rounds) leaves the screen's verdict, resting on
  // the function's own profile: the two nights' benchmark rounds (apart here, at 2.3
  // standard errors) are not enough, where a busier night would move them.
  b.check = RegressionCheck{};
  b.check->note = "sum was not sampled in round 2";
  EXPECT_EQ(find_regressions({a, b}).size(), 0u);
  a.samples = 90;
  b.samples = 200;  // 7.3 standard errors
  EXPECT_EQ(find_regressions({a, b}).size(), 1u);
}

TEST(History, TheSameCommitOnBothNightsIsNeverARegression) {
  NightResult a = night("2026-11-01", "sum", 100, 400, "same"), b = night("2026-11-02", "sum", 300, 1200, "same");
  EXPECT_EQ(find_regressions({a, b}).size(), 0u);
  b.commit = "other";
  EXPECT_EQ(find_regressions({a, b}).size(), 1u);
}

TEST(History, KeepsTheCheckAndOpensAStoreWrittenBeforeIt) {
  testing::TempDir dir;
  {
    // A store as the previous version wrote it: no regression_check column.
    HistoryStore store(dir / "old.sqlite");
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir / "old.sqlite").c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, "ALTER TABLE nights DROP COLUMN regression_check", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  HistoryStore store(dir / "old.sqlite");
  NightResult b = night("2026-11-02", "sum", 250, 20, "b");
  b.check = side_by_side({100, 101}, {180, 185}, true, 1.8);
  store.record(b);
  store.record(night("2026-11-01", "sum", 100, 9, "a"));
  const auto rows = store.all();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_FALSE(rows[0].check);
  ASSERT_TRUE(rows[1].check);
  EXPECT_EQ(rows[1].check->after_ns, (std::vector<double>{180, 185}));
  EXPECT_TRUE(rows[1].check->confirmed);
}

}  // namespace
}  // namespace maxcode
