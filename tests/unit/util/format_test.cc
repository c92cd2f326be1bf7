#include "runner/util/format.h"

#include <gtest/gtest.h>

namespace maxcode {
namespace {

// One duration format for verdict reasons, reports and PR bodies: three significant
// digits in the unit that suits the value.
TEST(Format, DurationsInTheUnitThatSuitsThem) {
  EXPECT_EQ(format_duration(2.5), "2.5 s");
  EXPECT_EQ(format_duration(123.4), "123 s");
  EXPECT_EQ(format_duration(0.0121), "12.1 ms");
  EXPECT_EQ(format_duration(0.0123), "12.3 ms");
  EXPECT_EQ(format_duration(20e-6), "20 µs");
  EXPECT_EQ(format_duration(4.2e-6), "4.2 µs");
  EXPECT_EQ(format_duration(850e-9), "850 ns");
}

TEST(Format, FixedDecimals) {
  EXPECT_EQ(fixed(1.656), "1.66");
  EXPECT_EQ(fixed(2, 0), "2");
}

}  // namespace
}  // namespace maxcode
