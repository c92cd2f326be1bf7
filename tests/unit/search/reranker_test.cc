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

}  // namespace
}  // namespace maxcode
