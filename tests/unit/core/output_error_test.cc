#include "runner/core/output_error.h"

#include <gtest/gtest.h>

namespace maxcode {
namespace {

TEST(OutputError, JsonRoundTrip) {
  OutputError e;
  e.output = "out";
  e.type = "float";
  e.values = 12;
  e.unwritten = 1;
  e.mismatches = 2;
  e.max_relative = 1.5e-3;
  e.p90_relative = 1e-3;
  e.max_ulp = 12000;
  e.first_mismatch = "element 3: expected 1, got 2";
  e.loose = true;
  e.note = "reduced precision";
  const OutputError back = output_error_from_json(to_json(e));
  EXPECT_EQ(to_json(back), to_json(e));
  EXPECT_EQ(to_json(e)["max_relative_error"], 1.5e-3);
}

TEST(OutputError, DescribeNamesTheFigures) {
  OutputError e;
  e.type = "float";
  e.values = 100;
  e.max_relative = 2.5e-7;
  e.max_ulp = 3;
  EXPECT_EQ(describe(e), "max relative error 2.5e-07 (90th percentile 0), max 3 ulp over 100 values");
  e.type = "text";
  EXPECT_EQ(describe(e), "max relative error 2.5e-07 over 100 printed values");
}

}  // namespace
}  // namespace maxcode
