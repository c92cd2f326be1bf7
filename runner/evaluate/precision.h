// Precision stated, not hidden: how far a candidate's outputs lie from the original's,
// per output, and whether that is far more than the output's arithmetic type needs.
//
// A candidate within tolerance only because the tolerance is loose (half-precision
// arithmetic under an fp32 tolerance) passes the comparison; its error profile gives it
// away: most of its elements are off by far more than rounding in the declared type
// can explain. The flag uses the 90th percentile of the relative error (robust to the
// few elements where cancellation makes any error look large) against a bound per type.
#pragma once

#include <string>

#include "runner/core/output_error.h"

namespace maxcode {


// Compares two raw buffers of `type` element by element within rtol/atol.
OutputError compare_buffers(const std::string& output, const std::string& type, const std::string& original,
                            const std::string& candidate, double rtol, double atol);

// Sets `loose` and `note` from the error figures and the type.
void flag_precision(OutputError& error);

// Folds the figures of another comparison of the same output (another call) into `into`.
void merge(OutputError& into, const OutputError& more);

}  // namespace maxcode
