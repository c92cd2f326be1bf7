// Splitting a job's budget across targets: equal parts of what is left, so savings of
// one target go to the next, and a spent limit stays spent.
#include <gtest/gtest.h>

#include "runner/job/budget_split.h"

namespace maxcode {
namespace {

TEST(BudgetSplit, DefaultsComeFromTheProjectTimesTheTargets) {
  SearchConfig search;
  search.max_evaluations = 6;
  search.max_wall_s = 100;
  const Allowance a = job_allowance(Budget{}, search, 2);
  EXPECT_EQ(a.evaluations, 12);
  EXPECT_EQ(a.wall_s, 200);
  EXPECT_EQ(a.tokens, 0);  // no limit
  Budget b;
  b.evaluations = 5;
  b.gpu_s = 40;
  EXPECT_EQ(job_allowance(b, search, 2).evaluations, 5);
  EXPECT_EQ(job_allowance(b, search, 2).gpu_s, 40);
}

TEST(BudgetSplit, EachTargetGetsAnEqualPartOfWhatIsLeft) {
  Allowance total;
  total.evaluations = 5;
  total.wall_s = 300;
  total.gpu_s = 60;
  Allowance first = next_target_allowance(total, {}, 2);
  EXPECT_EQ(first.evaluations, 3);  // the first gets the remainder
  EXPECT_EQ(first.wall_s, 150);
  EXPECT_EQ(first.gpu_s, 30);
  EXPECT_EQ(first.tokens, 0);  // unlimited stays unlimited
  EXPECT_EQ(why_nothing_left(first, total), "");

  Allowance spent;
  spent.evaluations = 1;  // the first target used 1 of its 3
  spent.wall_s = 50;
  spent.gpu_s = 10;
  const Allowance second = next_target_allowance(total, spent, 1);
  EXPECT_EQ(second.evaluations, 4);
  EXPECT_EQ(second.wall_s, 250);
  EXPECT_EQ(second.gpu_s, 50);
}

TEST(BudgetSplit, ASpentLimitLeavesNothingRatherThanNoLimit) {
  Allowance total;
  total.evaluations = 4;
  total.wall_s = 100;
  total.tokens = 1000;
  Allowance spent;
  spent.evaluations = 2;
  spent.tokens = 1000;
  const Allowance part = next_target_allowance(total, spent, 1);
  EXPECT_EQ(part.tokens, -1);
  EXPECT_EQ(why_nothing_left(part, total), "token budget spent");
  spent.evaluations = 4;
  EXPECT_EQ(why_nothing_left(next_target_allowance(total, spent, 1), total), "evaluation budget spent (4)");
}

}  // namespace
}  // namespace maxcode
