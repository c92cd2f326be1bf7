// Comparing a candidate's program output with the baseline's.
//
// Outputs are split into whitespace-separated tokens. Integers and text must match
// exactly; floating-point numbers within a relative (and optional absolute) tolerance;
// NaN must stand where NaN stood and infinities must match in sign.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/core/varying_field.h"

namespace maxcode {

struct Tolerance {
  double rtol = 1e-6;
  double atol = 0;
  const std::vector<VaryingField>* varying = nullptr;  // not compared; null or empty: none
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

// The numbers that differ (beyond `tolerance`) between two outputs that are otherwise
// alike: the same lines, each of the same shape. Nothing when the outputs differ in
// anything else (text, line count, where the numbers stand): those cannot be masked.
std::optional<std::vector<VaryingField>> find_varying_fields(std::string_view first, std::string_view second,
                                                             const Tolerance& tolerance);

// How many numbers of `output` a comparison under `tolerance` looks at (all but the
// varying fields).
std::size_t compared_numbers(std::string_view output, const Tolerance& tolerance);

// "'time: # ms' (number 1)": a field as people read it.
std::string describe(const VaryingField& field);

// True when some token is a floating-point number (not an integer, not hex).
bool prints_floats(std::string_view output);

// True when every numeric token is zero (or there are none): a check compared on such
// output proves nothing, so the evaluator warns.
bool all_numbers_zero(std::string_view output);

}  // namespace maxcode
