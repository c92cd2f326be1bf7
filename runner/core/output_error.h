// OutputError: how far one output of a candidate lies from the original's (the
// precision a report and a PR state). Computed by runner/evaluate/precision.cc.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace maxcode {

struct OutputError {
  std::string output;       // "out" (a buffer the call check recorded) or "main: printed output"
  std::string type;         // "float", "double", an integer type, or "text" for printed numbers
  std::size_t values = 0;   // elements compared
  std::size_t unwritten = 0;  // elements still holding the poison the call check wrote
  std::size_t mismatches = 0;  // beyond the tolerance (unwritten ones included)
  double max_relative = 0;
  double p90_relative = 0;
  double max_ulp = 0;       // floating types: units in the last place; integers: absolute
  std::string first_mismatch;  // "element 12: expected 3.5, got nan (not written)"
  bool loose = false;       // error far above the type's rounding: reduced precision
  std::string note;         // why `loose`
};

// "max relative error 3.1e-07 (90th percentile 0), max 2 ulp over 1048576 values".
std::string describe(const OutputError& error);

nlohmann::json to_json(const OutputError& error);
OutputError output_error_from_json(const nlohmann::json& j);

}  // namespace maxcode
