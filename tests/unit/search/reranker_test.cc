#include "runner/search/reranker.h"

#include <gtest/gtest.h>

namespace maxcode {
namespace {

TEST(Reranker, ParsesTheFirstNumber) {
  EXPECT_DOUBLE_EQ(*parse_speedup_estimate("1.8"), 1.8);
  EXPECT_DOUBLE_EQ(*parse_speedup_estimate("About 2.5x, maybe 3"), 2.5);
  EXPECT_DOUBLE_EQ(*parse_speedup_estimate("0"), 0.0);
  EXPECT_FALSE(parse_speedup_estimate("no idea"));
  EXPECT_FALSE(parse_speedup_estimate("-3"));
  EXPECT_FALSE(parse_speedup_estimate("1e9"));
}

// A reasoning model thinks aloud before it answers: its answer is the labelled estimate,
// or the last line with a number, never the first number of its reasoning.
TEST(Reranker, ReadsTheAnswerAfterTheReasoning) {
  EXPECT_DOUBLE_EQ(*parse_speedup_estimate("The loop does 4 loads per lane and 2 stores.\nFinal estimate: 1.5"), 1.5);
  EXPECT_DOUBLE_EQ(*parse_speedup_estimate("<think>8 lanes, 3 cycles</think>\n**Estimate**: 2.25x\n"), 2.25);
  EXPECT_DOUBLE_EQ(*parse_speedup_estimate("My estimate depends on 4 lanes.\nSo about 1.3, I think"), 1.3);
  EXPECT_DOUBLE_EQ(*parse_speedup_estimate("Memory-bound at 2 loads per element.\n\n1.1\n\n"), 1.1);
  EXPECT_FALSE(parse_speedup_estimate("Estimate: unclear\nno number here"));
  // Code is never the estimate: a reply of code alone has none.
  EXPECT_FALSE(parse_speedup_estimate("```cpp\nint f() { return 0; }\n```\n"));
  EXPECT_DOUBLE_EQ(*parse_speedup_estimate("1.4\n```cpp\nint f() { return 0; }\n```"), 1.4);
}

// Hostile replies (issue 22, point 9): no estimate, and no crash or exception.
TEST(Reranker, HostileRepliesGiveNoEstimate) {
  EXPECT_FALSE(parse_speedup_estimate(std::string(200'000, '9')));  // std::regex overflowed the stack
  EXPECT_FALSE(parse_speedup_estimate("1e999"));                     // std::stod threw out_of_range
  EXPECT_FALSE(parse_speedup_estimate("-1e999"));
  EXPECT_FALSE(parse_speedup_estimate("speedup: 1e-999"));
  EXPECT_FALSE(parse_speedup_estimate("0." + std::string(100, '0') + "1"));  // too long to be an estimate
  EXPECT_FALSE(parse_speedup_estimate(std::string(1'000'000, '-') + "x"));
  EXPECT_DOUBLE_EQ(*parse_speedup_estimate(std::string(100'000, ' ') + "1.5e0x"), 1.5);
  EXPECT_DOUBLE_EQ(*parse_speedup_estimate("x.5e1 or so"), 5.0);
  EXPECT_DOUBLE_EQ(*parse_speedup_estimate("+2.e"), 2.0);
}

}  // namespace
}  // namespace maxcode
