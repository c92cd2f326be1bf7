#include "runner/evaluate/output_compare.h"

#include <gtest/gtest.h>

#include <string>

namespace maxcode {
namespace {

constexpr Tolerance kDefault{};  // rtol 1e-6, atol 0

Comparison compare(const std::string& expected, const std::string& actual,
                   Tolerance tolerance = kDefault) {
  return compare_outputs(expected, actual, tolerance);
}

// The reason given for the only mismatch, or "" when the outputs match.
std::string why(const std::string& expected, const std::string& actual,
                Tolerance tolerance = kDefault) {
  const Comparison c = compare(expected, actual, tolerance);
  return c.first.empty() ? "" : c.first[0].why;
}

TEST(CompareOutputs, IdenticalOutputsMatch) {
  const Comparison c = compare("1 2 3\nsum 6\n", "1 2 3\nsum 6\n");
  EXPECT_TRUE(c.equal);
  EXPECT_EQ(c.mismatches, 0u);
  EXPECT_EQ(c.expected_tokens, 5u);
  EXPECT_EQ(c.actual_tokens, 5u);
}

TEST(CompareOutputs, WhitespaceLayoutDoesNotMatter) {
  EXPECT_TRUE(compare("1 2\n3\n", "1\t2 3").equal);
  EXPECT_TRUE(compare("a\r\nb\r\n", "a\nb\n").equal);
}

TEST(CompareOutputs, IntegersCompareExactly) {
  EXPECT_EQ(why("41", "42"), "integer differs");
  EXPECT_EQ(why("-5", "5"), "integer differs");
  // An integer must not pass the float tolerance: 1e6+1 vs 1e6 is within rtol 1e-6.
  EXPECT_FALSE(compare("1000001", "1000000", {1e-3, 0}).equal);
}

TEST(CompareOutputs, IntegersCompareByValue) {
  EXPECT_TRUE(compare("7 0 -3", "+007 -0 -0003").equal);
}

TEST(CompareOutputs, IntegersBeyond64BitsStayExact) {
  // 2^64 + 1 vs 2^64 + 2 would round to the same double, or wrap in 64 bits.
  EXPECT_EQ(why("18446744073709551617", "18446744073709551618"), "integer differs");
  EXPECT_EQ(why("-9223372036854775809", "9223372036854775807"), "integer differs");
  EXPECT_TRUE(compare("123456789012345678901234567890", "123456789012345678901234567890").equal);
  EXPECT_TRUE(compare("123456789012345678901234567890", "000123456789012345678901234567890").equal);
}

TEST(CompareOutputs, FloatsWithinRelativeToleranceMatch) {
  EXPECT_TRUE(compare("1.0000000", "1.0000005").equal);
  EXPECT_TRUE(compare("1e10", "1.0000001e10").equal);
  EXPECT_TRUE(compare("-0.5 1e-3", "-0.5000000001 0.001").equal);
  EXPECT_TRUE(compare("0.0", "-0.0").equal);
}

TEST(CompareOutputs, FloatsOutsideRelativeToleranceDiffer) {
  EXPECT_EQ(why("1.25", "1.5"), "relative error 1.67e-01 exceeds rtol 1e-06");
  EXPECT_EQ(why("1.0", "1.0001", {1e-6, 0}), "relative error 1.00e-04 exceeds rtol 1e-06");
  EXPECT_TRUE(compare("1.0", "1.0001", {1e-3, 0}).equal);
  // Near zero a relative tolerance alone is unforgiving.
  EXPECT_FALSE(compare("0.0", "1e-300").equal);
}

TEST(CompareOutputs, AbsoluteToleranceCoversValuesNearZero) {
  EXPECT_TRUE(compare("0.0 1e-12", "1e-9 -1e-9", {1e-6, 1e-8}).equal);
  EXPECT_EQ(why("0.0", "1e-6", {1e-6, 1e-8}),
            "absolute error 1.00e-06 exceeds atol 1e-08 + rtol 1e-06 * 1.00e-06");
}

TEST(CompareOutputs, IntegerAgainstFloatUsesTheFloatRule) {
  EXPECT_TRUE(compare("3", "3.0000000001").equal);
  EXPECT_TRUE(compare("2.0", "2").equal);
  EXPECT_EQ(why("3", "3.5"), "relative error 1.43e-01 exceeds rtol 1e-06");
}

TEST(CompareOutputs, NanMatchesOnlyNan) {
  EXPECT_TRUE(compare("nan NaN -nan", "NaN nan nan").equal);
  EXPECT_EQ(why("nan", "1.0"), "NaN expected");
  EXPECT_EQ(why("1.0", "nan"), "NaN where a number was expected");
  EXPECT_EQ(why("nan", "inf"), "NaN expected");
  EXPECT_EQ(why("7", "nan"), "NaN where a number was expected");
  // NaN moved to another position: both positions are reported.
  const Comparison c = compare("1.0 nan 2.0", "nan 1.0 2.0");
  EXPECT_EQ(c.mismatches, 2u);
  EXPECT_EQ(c.first[0].token, 0u);
  EXPECT_EQ(c.first[1].token, 1u);
}

TEST(CompareOutputs, InfinityMustMatchInSign) {
  EXPECT_TRUE(compare("inf -inf", "Infinity -INF").equal);
  EXPECT_EQ(why("inf", "-inf"), "infinity of the wrong sign");
  EXPECT_EQ(why("inf", "1e308"), "infinity expected");
  EXPECT_EQ(why("1e308", "inf"), "infinity where a finite number was expected");
  // A huge tolerance still does not turn a finite value into infinity.
  EXPECT_FALSE(compare("inf", "1e308", {1e9, 1e9}).equal);
}

TEST(CompareOutputs, TextComparesExactly) {
  EXPECT_TRUE(compare("result: ok", "result: ok").equal);
  EXPECT_EQ(why("ok", "OK"), "text differs");
  // Not numbers, so no tolerance: a suffix, hex, an overflowing literal.
  EXPECT_EQ(why("1.5f", "1.5000001f"), "text differs");
  EXPECT_EQ(why("0x10", "16"), "text differs");
  EXPECT_EQ(why("1e999", "2e999"), "text differs");
  EXPECT_EQ(why("1.0", "one"), "text differs");
}

TEST(CompareOutputs, MixedTextAndNumbers) {
  const std::string expected = "n= 3 mean= 2.5 status ok\n";
  EXPECT_TRUE(compare(expected, "n= 3 mean= 2.5000001 status ok\n").equal);
  const Comparison c = compare(expected, "n= 4 mean= 2.5 status bad\n");
  EXPECT_EQ(c.mismatches, 2u);
  EXPECT_EQ(c.first[0].why, "integer differs");
  EXPECT_EQ(c.first[1].why, "text differs");
}

TEST(CompareOutputs, TokenCountMismatchIsAMismatch) {
  const Comparison shorter = compare("1 2 3\n4 5 6 7 8 9 10 11 12\n", "1 2 3\n4 5 6 7 8 9 10\n");
  EXPECT_FALSE(shorter.equal);
  EXPECT_EQ(shorter.expected_tokens, 12u);
  EXPECT_EQ(shorter.actual_tokens, 10u);
  ASSERT_EQ(shorter.first.size(), 1u);
  EXPECT_EQ(shorter.first[0].why, "output has 10 tokens, expected 12");
  EXPECT_EQ(shorter.first[0].token, 10u);
  EXPECT_EQ(shorter.first[0].line, 2u);
  EXPECT_EQ(shorter.first[0].expected, "11");
  EXPECT_EQ(shorter.first[0].actual, "");

  const Comparison longer = compare("1 2", "1 2 3");
  EXPECT_FALSE(longer.equal);
  EXPECT_EQ(longer.first[0].why, "output has 3 tokens, expected 2");
  EXPECT_EQ(longer.first[0].actual, "3");

  EXPECT_FALSE(compare("", "0").equal);
  EXPECT_FALSE(compare("0", "").equal);
  EXPECT_TRUE(compare("", " \n").equal);
}

TEST(CompareOutputs, RecordsLinesAndTokenPositions) {
  const Comparison c = compare("a b\n\nc 1.0\n  d 5\n", "a b\n\nc 2.0\n  d 6\n");
  ASSERT_EQ(c.first.size(), 2u);
  EXPECT_EQ(c.first[0].line, 3u);
  EXPECT_EQ(c.first[0].token, 3u);
  EXPECT_EQ(c.first[0].expected, "1.0");
  EXPECT_EQ(c.first[0].actual, "2.0");
  EXPECT_EQ(c.first[1].line, 4u);
  EXPECT_EQ(c.first[1].token, 5u);
}

TEST(CompareOutputs, ReportsOnlyTheFirstFewButCountsAll) {
  std::string expected, actual;
  for (int i = 0; i < 100; ++i) {
    expected += std::to_string(i) + "\n";
    actual += std::to_string(i % 2 == 0 ? i : i + 1) + "\n";
  }
  const Comparison c = compare_outputs(expected, actual, kDefault, 3);
  EXPECT_EQ(c.mismatches, 50u);
  ASSERT_EQ(c.first.size(), 3u);
  EXPECT_EQ(c.first[2].line, 6u);
  EXPECT_EQ(compare_outputs(expected, actual, kDefault, 0).first.size(), 0u);
}

TEST(Summary, SaysWhenOutputsMatch) {
  EXPECT_EQ(compare("1 2 3", "1 2 3").summary(), "outputs match (3 values)");
}

TEST(Summary, CountsAndDescribesTheFirstDifferences) {
  const Comparison c = compare("x 1.25\n7\nok", "x 1.5\n8\nok", kDefault);
  EXPECT_EQ(c.summary(),
            "2 of 4 values differ; first at line 1, token 1: expected 1.25, got 1.5 "
            "(relative error 1.67e-01 exceeds rtol 1e-06); line 2, token 2: expected 7, "
            "got 8 (integer differs)");
}

TEST(Summary, MentionsMoreThanReported) {
  const Comparison c = compare_outputs("1 2 3 4", "5 6 7 8", kDefault, 1);
  const std::string s = c.summary();
  EXPECT_NE(s.find("4 of 4 values differ"), std::string::npos) << s;
  EXPECT_NE(s.find("and 3 more"), std::string::npos) << s;
}

TEST(Summary, DescribesALengthMismatch) {
  EXPECT_EQ(compare("1 2 3", "1 2").summary(),
            "output has 2 tokens, expected 3; the first 2 values match; first at line 1, "
            "token 2: expected 3, got end of output");
  const std::string s = compare("1 2 3", "1 9").summary();
  EXPECT_NE(s.find("output has 2 tokens, expected 3; 1 of 2 values differ"), std::string::npos)
      << s;
}

TEST(Summary, ShortensLongTokens) {
  const std::string long_token(200, 'a');
  const std::string s = compare(long_token, "b").summary();
  EXPECT_LT(s.size(), 150u) << s;
  EXPECT_NE(s.find("..."), std::string::npos);
}

TEST(AllNumbersZero, TrueWithoutNumbersOrWithOnlyZeros) {
  EXPECT_TRUE(all_numbers_zero(""));
  EXPECT_TRUE(all_numbers_zero("done ok"));
  EXPECT_TRUE(all_numbers_zero("0 0.0 -0 +0.000 0e10 -0.0\nsum: 0"));
}

TEST(AllNumbersZero, FalseWhenAnyNumberIsNotZero) {
  EXPECT_FALSE(all_numbers_zero("0 0 0 1e-30"));
  EXPECT_FALSE(all_numbers_zero("0 -3"));
  EXPECT_FALSE(all_numbers_zero("0 nan"));
  EXPECT_FALSE(all_numbers_zero("inf"));
  EXPECT_FALSE(all_numbers_zero("00000000000000000000000000000000000001"));
  // Text that merely contains digits is not a number.
  EXPECT_TRUE(all_numbers_zero("0 x1 1.5f run2"));
}

// A benchmark that prints its own timings: two runs of the original with one seed
// differ only there, and those numbers are then left out of comparisons.
TEST(VaryingFields, NumbersThatDifferBetweenIdenticalRunsAreFoundAndNotCompared) {
  const std::string first = "sum: 42 checksum 0.5\ntime: 1.23 ms (12 ns per element)\nsum: 7 checksum 0.25\n";
  const std::string second = "sum: 42 checksum 0.5\ntime: 1.87 ms (19 ns per element)\nsum: 7 checksum 0.25\n";
  const auto fields = find_varying_fields(first, second, {});
  ASSERT_TRUE(fields);
  ASSERT_EQ(fields->size(), 2u);
  EXPECT_EQ((*fields)[0], (VaryingField{"time: # ms (# ns per element)", 0}));
  EXPECT_EQ((*fields)[1], (VaryingField{"time: # ms (# ns per element)", 1}));
  EXPECT_EQ(describe((*fields)[0]), "'time: # ms (# ns per element)' (number 1)");

  const Tolerance masked{1e-6, 0, &*fields};
  EXPECT_FALSE(compare_outputs(first, second, {}).equal);
  EXPECT_TRUE(compare_outputs(first, second, masked).equal);
  EXPECT_EQ(compared_numbers(first, masked), 4u);
  // The results are still compared, and a masked place must still hold a number.
  EXPECT_FALSE(compare_outputs(first, "sum: 43 checksum 0.5\ntime: 2 ms (3 ns per element)\nsum: 7 checksum 0.25\n",
                               masked).equal);
  EXPECT_FALSE(compare_outputs(first, "sum: 42 checksum 0.5\ntime: fast ms (3 ns per element)\nsum: 7 checksum 0.25\n",
                               masked).equal);
}

TEST(VaryingFields, OutputsThatDifferInMoreThanNumbersCannotBeMasked) {
  EXPECT_FALSE(find_varying_fields("time: 1 ms\n", "time: 1 us\n", {}));          // text
  EXPECT_FALSE(find_varying_fields("a 1\nb 2\n", "a 1\n", {}));                   // lines
  EXPECT_FALSE(find_varying_fields("a 1 2\n", "a 1\n2\n", {}));                  // where numbers stand
  const auto none = find_varying_fields("same 1\n", "same 1\n", {});
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
  // A field is a place in a line's shape, in every line of that shape: lines repeat
  // ("iter 3: 1.2 ms"), and their count may change with the seed.
  const auto fields = find_varying_fields("n 5\nn 6\n", "n 5\nn 9\n", {});
  ASSERT_TRUE(fields);
  EXPECT_EQ(fields->size(), 1u);
}

}  // namespace
}  // namespace maxcode
