// What the interval is, and why.
//
// Each A/B round gives one pair (b_i, c_i): the baseline's and the candidate's time,
// measured back to back. The quantity reported is the speedup
//
//     R = median(b) / median(c)
//
// and its uncertainty is a 95% *paired percentile bootstrap* interval: draw n round
// indices with replacement, compute R on the rounds drawn (each drawn index brings both
// of its samples), repeat `resamples` times, and take the 2.5th and 97.5th percentiles
// of the resampled R values.
//
// Why a bootstrap: the sampling distribution of a ratio of medians has no convenient
// closed form, and timing noise is skewed (long right tails from interrupts, clock
// changes, cache misses), so normal-theory intervals are wrong in the tails that
// matter. Why the percentile method: it needs no variance estimate, it respects the
// ratio's range (the interval never crosses zero) and it is invariant under monotone
// transforms, so the interval of 1/R is the reciprocal of this one (up to interpolation
// between neighbouring resamples) -- an A/A run gives the same noise floor whichever
// side is called "baseline". Why paired: drift (thermal state, other tenants,
// frequency changes) hits both samples of a round alike; resampling rounds rather than
// samples keeps that shared part together, so it cancels in the ratio instead of
// widening the interval.
//
// How well it holds: with 15 rounds of synthetic lognormal timings with shared drift
// (tests/unit/util/stats_test.cc), the interval contains the true ratio about 98-99% of the
// time, not 95%: for a ratio of paired medians the percentile bootstrap errs wide, so
// a lower bound that clears the minimum is, if anything, understated.
//
// Resampling uses std::mt19937_64 with a fixed seed, so the same timings always give
// the same interval (reproducible reports, stable tests).
#include "runner/util/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <span>
#include <stdexcept>
#include <string>

namespace maxcode {
namespace {

// Median of `values`, reordering them: nth_element is linear, where sorting is not.
double median_in_place(std::span<double> values) {
  const std::size_t n = values.size();
  const auto mid = values.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(values.begin(), mid, values.end());
  const double upper = *mid;
  if (n % 2 == 1) return upper;
  // nth_element leaves the smaller half before `mid`: its largest is the other middle.
  const double lower = *std::max_element(values.begin(), mid);
  return lower + (upper - lower) / 2;
}

// The p-quantile (0 <= p <= 1) by linear interpolation between order statistics (the
// usual "type 7" definition), reordering `values`.
double quantile_in_place(std::span<double> values, double p) {
  const double h = p * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(h));
  const auto at = values.begin() + static_cast<std::ptrdiff_t>(below);
  std::nth_element(values.begin(), at, values.end());
  const double low = *at;
  if (below + 1 >= values.size()) return low;
  const double high = *std::min_element(at + 1, values.end());
  return low + (h - static_cast<double>(below)) * (high - low);
}

// Uniform round indices in [0, n) from std::mt19937_64, whose output the standard fixes
// exactly (std::uniform_int_distribution's algorithm varies between standard
// libraries, which would make intervals differ between builds). Each 64-bit draw gives
// two indices by multiply-shift on its 32-bit halves: no division in the hot loop, and
// a bias of at most n / 2^32, far below anything a bootstrap can see.
class RoundPicker {
 public:
  RoundPicker(std::size_t n, std::uint64_t seed) : n_(n), rng_(seed) {}
  std::size_t operator()() {
    if (!have_spare_) {
      const std::uint64_t bits = rng_();
      spare_ = bits >> 32;
      have_spare_ = true;
      return scale(bits & 0xffffffffu);
    }
    have_spare_ = false;
    return scale(spare_);
  }

 private:
  std::size_t scale(std::uint64_t half) const {
    return static_cast<std::size_t>((half * n_) >> 32);
  }
  std::uint64_t n_;
  std::mt19937_64 rng_;
  std::uint64_t spare_ = 0;
  bool have_spare_ = false;
};

// One side's times in ascending order, remembering which round each came from.
class SortedSide {
 public:
  explicit SortedSide(const std::vector<double>& times) : rounds_(times.size()) {
    std::iota(rounds_.begin(), rounds_.end(), std::size_t{0});
    std::sort(rounds_.begin(), rounds_.end(),
              [&](std::size_t a, std::size_t b) { return times[a] < times[b]; });
    for (std::size_t round : rounds_) sorted_.push_back(times[round]);
  }

  // Median of the resample that drew round r draws[r] times (the draws sum to n):
  // walk the sorted times, counting draws, to the middle position(s).
  double resample_median(const std::vector<std::uint32_t>& draws) const {
    const std::size_t n = rounds_.size();
    const std::size_t lower_at = (n - 1) / 2, upper_at = n / 2;  // equal when n is odd
    std::size_t seen = 0;
    double lower = sorted_.front();
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t before = seen;
      seen += draws[rounds_[i]];
      if (before <= lower_at && lower_at < seen) lower = sorted_[i];
      if (upper_at < seen) return lower + (sorted_[i] - lower) / 2;
    }
    return sorted_.back();  // not reached: the draws sum to n
  }

 private:
  std::vector<std::size_t> rounds_;
  std::vector<double> sorted_;
};

// Times are durations: a zero, negative or non-finite one is a measuring bug, and
// letting it through would give an infinite or meaningless ratio.
void check_times(const std::vector<double>& times, const char* side) {
  for (double t : times) {
    if (!(std::isfinite(t) && t > 0)) {
      throw std::invalid_argument(std::string("paired_ratio_interval: ") + side +
                                  " time " + std::to_string(t) + " is not a positive number");
    }
  }
}

void check_inputs(const std::vector<double>& baseline, const std::vector<double>& candidate,
                  int resamples) {
  if (baseline.empty()) throw std::invalid_argument("paired_ratio_interval: no rounds");
  if (baseline.size() != candidate.size()) {
    throw std::invalid_argument("paired_ratio_interval: " + std::to_string(baseline.size()) +
                                " baseline times but " + std::to_string(candidate.size()) +
                                " candidate times (they must be paired)");
  }
  if (resamples < 1) throw std::invalid_argument("paired_ratio_interval: resamples < 1");
  if (baseline.size() > 0xffffffffu) {  // RoundPicker draws 32-bit indices
    throw std::invalid_argument("paired_ratio_interval: too many rounds");
  }
  check_times(baseline, "baseline");
  check_times(candidate, "candidate");
}

}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) throw std::invalid_argument("median of no values");
  return median_in_place(values);
}

RatioInterval paired_ratio_interval(const std::vector<double>& baseline,
                                    const std::vector<double>& candidate, int resamples,
                                    std::uint64_t seed) {
  check_inputs(baseline, candidate, resamples);
  const std::size_t n = baseline.size();

  RatioInterval result;
  result.rounds = static_cast<int>(n);
  result.median = median(baseline) / median(candidate);

  // A resample is fully described by how often it drew each round, and its medians
  // can be read off those counts in each side's sorted order: linear time per
  // resample, no sorting or copying of times, and no allocation inside the loop.
  const SortedSide base_side(baseline), cand_side(candidate);
  std::vector<std::uint32_t> draws(n);
  std::vector<double> ratios(static_cast<std::size_t>(resamples));
  RoundPicker pick(n, seed);
  for (double& ratio : ratios) {
    std::fill(draws.begin(), draws.end(), 0);
    for (std::size_t i = 0; i < n; ++i) ++draws[pick()];  // a round brings both its times
    ratio = base_side.resample_median(draws) / cand_side.resample_median(draws);
  }
  result.low = quantile_in_place(ratios, 0.025);
  result.high = quantile_in_place(ratios, 0.975);
  return result;
}

double noise_floor(const RatioInterval& aa) {
  // In an A/A run the true ratio is 1, so the estimate's distance from 1 (either way)
  // is what the method itself passes off as a speedup: order effects, one workspace
  // running slower than another. Sampling noise is not counted here again: the A/B
  // interval's lower bound already carries it.
  double floor = 1.0;
  if (aa.median > floor) floor = aa.median;
  if (aa.median > 0 && 1.0 / aa.median > floor) floor = 1.0 / aa.median;
  return floor;
}

bool significant(const RatioInterval& ab, double min_speedup, double floor) {
  return ab.low > min_speedup && ab.low > floor;
}

}  // namespace maxcode
