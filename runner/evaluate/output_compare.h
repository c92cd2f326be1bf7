// Comparing a candidate's program output with the baseline's.
//
// Outputs are split into whitespace-separated tokens. Integers and text must match
// exactly; floating-point numbers within a relative (and optional absolute) tolerance;
// NaN must stand where NaN stood and infinities must match in sign.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace maxcode {

struct Tolerance {
  double rtol = 1e-6;
  double atol = 0;
};

struct Mismatch {
  std::size_t line = 0;   // 1-based line in the expected output
  std::size_t token = 0;  // 0-based token index in the whole output
  std::string expected;
  std::string actual;
  std::string why;  // "integer differs", "relative error 3.2e-3 > rtol 1e-06", "NaN position", ...
};

struct Comparison {
  bool equal = true;
  std::size_t mismatches = 0;        // total count
  std::vector<Mismatch> first;       // the first few, for feedback
  std::size_t expected_tokens = 0;
  std::size_t actual_tokens = 0;
  double max_relative_error = 0;     // over the numbers compared as floats (precision)
  // One paragraph for people and critics: counts and the first differing values.
  std::string summary() const;
};

Comparison compare_outputs(std::string_view expected, std::string_view actual,
                           Tolerance tolerance, std::size_t max_reported = 5);

// True when every numeric token is zero (or there are none): a check compared on such
// output proves nothing, so the evaluator warns.
bool all_numbers_zero(std::string_view output);

}  // namespace maxcode
