// Statistics of A/B timing: the speedup as the median of per-round paired ratios, its
// 95% interval, the A/A noise floor, and a drift check for the stopping rule.
//
// Samples come in pairs (one baseline and one candidate time per round, measured back
// to back in random order). Each round's ratio b_i / c_i cancels whatever load or
// drift hit both of its runs; the median of those ratios is robust to the rounds that
// a load burst hit on one side only. stats.cc states the interval and its coverage.
#pragma once

#include <cstdint>
#include <vector>

namespace maxcode {

double median(std::vector<double> values);

struct RatioInterval {
  double median = 0;  // median over rounds of baseline_i / candidate_i: > 1 means faster
  double low = 0;     // 95% interval (stats.cc: order statistics, widened by a block bootstrap)
  double high = 0;
  int rounds = 0;     // pairs used
  double relative_width() const { return median > 0 ? (high - low) / median : 0; }
  bool contains(double x) const { return low <= x && x <= high; }
};

// The speedup and its 95% interval from paired rounds (stats.cc says how). `baseline`
// and `candidate` have equal length (one entry per round, in the order measured: the
// block bootstrap uses that order). Deterministic for a given seed.
RatioInterval paired_ratio_interval(const std::vector<double>& baseline,
                                    const std::vector<double>& candidate,
                                    int resamples = 2000, std::uint64_t seed = 0x9e3779b9);

// The estimator maxcode used before: median(baseline) / median(candidate) with a paired
// percentile bootstrap. Kept for the coverage benchmark (bench/stats_coverage.cc), which
// prints both side by side; under load bursts that hit one side of a round it reports
// noise as speedup (docs/evaluation.md "Statistics").
RatioInterval ratio_of_medians_interval(const std::vector<double>& baseline,
                                        const std::vector<double>& candidate,
                                        int resamples = 2000, std::uint64_t seed = 0x9e3779b9);

// Whether the rounds drifted during the session: the per-round ratios of the first and
// the second half have 95% median intervals that do not overlap. A session that drifts
// does not stop early on a narrow interval (evaluate/timing/timer.cc): its rounds are not samples of
// one distribution, and an interval from them would cover too little.
bool ratios_drifted(const std::vector<double>& baseline, const std::vector<double>& candidate);

// The noise floor from an A/A run (the same program as both sides): the apparent
// speedup the method showed where there was none, max(median, 1/median). At least 1.
double noise_floor(const RatioInterval& aa);

// A speedup counts only when its lower bound clears both the configured minimum and
// the A/A noise floor.
bool significant(const RatioInterval& ab, double min_speedup, double floor);

}  // namespace maxcode
