#include "runner/job/init_tolerance.h"

#include <gtest/gtest.h>

namespace maxcode {
namespace {

TEST(InitTolerance, IntegerOutputKeepsTheDefault) {
  const std::string out = "sum 42\n";
  const ToleranceChoice c = choose_tolerance("main", out, &out, {});
  EXPECT_FALSE(c.floats);
  EXPECT_DOUBLE_EQ(c.rtol, 1e-6);
  EXPECT_DOUBLE_EQ(c.atol, 0);
}

TEST(InitTolerance, TenTimesWhatAFastMathBuildMovesNoTighterThanTheFloor) {
  // 3.2e-5 relative -> 3.2e-4 -> 1e-3.
  const std::string reference = "energy: 66757.4375\n";
  const std::string fast = "energy: 66759.5703\n";
  ToleranceChoice c = choose_tolerance("main", reference, &fast, {});
  EXPECT_TRUE(c.floats && c.measured);
  EXPECT_NEAR(c.max_relative, 3.2e-5, 1e-6);
  EXPECT_DOUBLE_EQ(c.rtol, 1e-3);
  EXPECT_DOUBLE_EQ(c.atol, 0);
  EXPECT_NE(c.why.find("fast-math"), std::string::npos) << c.why;
  // Unchanged by fast math: the floor for floating-point output.
  c = choose_tolerance("main", reference, &reference, {});
  EXPECT_DOUBLE_EQ(c.rtol, 1e-5);
  // Not run: the floor, said.
  c = choose_tolerance("main", reference, nullptr, {});
  EXPECT_FALSE(c.measured);
  EXPECT_DOUBLE_EQ(c.rtol, 1e-5);
  EXPECT_NE(c.why.find("could not be run"), std::string::npos);
}

TEST(InitTolerance, NumbersNearZeroGetAnAbsoluteTerm) {
  const std::string reference = "x 1.0 y 1e-9\n";
  const std::string fast = "x 1.0 y 3e-9\n";
  const ToleranceChoice c = choose_tolerance("main", reference, &fast, {});
  EXPECT_DOUBLE_EQ(c.rtol, 1e-2);  // relative 0.67 is capped
  EXPECT_GT(c.atol, 2e-9);
  EXPECT_NE(c.why.find("capped"), std::string::npos) << c.why;
}

TEST(InitTolerance, TimingsAreNotTakenForSensitivity) {
  const std::vector<VaryingField> timing{{"time: # ms", 0}};
  const std::string reference = "e 1.5\ntime: 10.2 ms\n";
  const std::string fast = "e 1.5\ntime: 3.1 ms\n";
  const ToleranceChoice c = choose_tolerance("main", reference, &fast, timing);
  EXPECT_DOUBLE_EQ(c.rtol, 1e-5);
}

}  // namespace
}  // namespace maxcode
