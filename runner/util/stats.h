// Statistics of A/B timing: medians and a paired bootstrap interval of their ratio.
//
// Samples come in pairs (one baseline and one candidate time per round, measured back
// to back in random order), so resampling keeps pairs together: whatever drift hit a
// round hit both of its samples.
#pragma once

#include <cstdint>
#include <vector>

namespace maxcode {

double median(std::vector<double> values);

struct RatioInterval {
  double median = 0;  // median(baseline) / median(candidate): > 1 means faster
  double low = 0;     // 2.5th percentile of the bootstrap distribution
  double high = 0;    // 97.5th percentile
  int rounds = 0;     // pairs used
  double relative_width() const { return median > 0 ? (high - low) / median : 0; }
  bool contains(double x) const { return low <= x && x <= high; }
};

// Paired bootstrap 95% percentile interval of median(baseline)/median(candidate).
// `baseline` and `candidate` have equal length (one entry per round). Deterministic
// for a given seed.
RatioInterval paired_ratio_interval(const std::vector<double>& baseline,
                                    const std::vector<double>& candidate,
                                    int resamples = 2000, std::uint64_t seed = 0x9e3779b9);

// The noise floor from an A/A run (the same program as both sides): the apparent
// speedup the method showed where there was none, max(median, 1/median). At least 1.
double noise_floor(const RatioInterval& aa);

// A speedup counts only when its lower bound clears both the configured minimum and
// the A/A noise floor.
bool significant(const RatioInterval& ab, double min_speedup, double floor);

}  // namespace maxcode
