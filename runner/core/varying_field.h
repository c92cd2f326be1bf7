// A number a benchmark prints that differs between runs of the original with one seed
// (a timing: "time: 1.23 ms"). Found by the evaluator (runner/evaluate/output_check.h)
// or named in the config (`benchmarks[].varying`, which `maxcode init` writes); such a
// number is not compared, only required to be a number (docs/evaluation.md).
#pragma once

#include <cstddef>
#include <string>

namespace maxcode {

// The line's shape, its tokens with every number written "#" ("time: # ms"), and which
// of that line's numbers it is (0-based; the config and the messages count from 1).
struct VaryingField {
  std::string line_shape;
  std::size_t slot = 0;
  bool operator==(const VaryingField&) const = default;
};

}  // namespace maxcode
