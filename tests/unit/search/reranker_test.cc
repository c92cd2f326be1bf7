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
