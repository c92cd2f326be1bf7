// What the interval is, and why.
//
// Each A/B round gives one pair (b_i, c_i): the baseline's and the candidate's time,
// measured back to back in random order. The speedup reported is
//
//     R = median over rounds of r_i,   r_i = b_i / c_i
//
// Why per-round ratios: load that lasts a round (another tenant, a frequency change)
// hits both of its runs and cancels in r_i. Load that hits one run only makes that
// round's ratio an outlier, which a median ignores. The ratio of the two sides'
// medians, maxcode's earlier estimator (ratio_of_medians_interval, kept for the
// coverage benchmark), does not cancel it: under bimodal load (runs jumping between
// ~0.30 s and ~0.48 s) an A/A session reported 1.341 where the median of its per-round
// ratios was 1.017.
//
// The 95% interval is the wider of two:
//  (a) the distribution-free interval of a median from order statistics: with the
//      ratios sorted, [r_(k), r_(n+1-k)] for the largest k with P(Bin(n, 1/2) < k) <=
//      0.025. For independent rounds it covers the true median with probability at
//      least 95% whatever the noise's shape (97.9% at n = 10: k = 2). Below 6 rounds no
//      such k exists and the interval is [min, max].
//  (b) a moving-block bootstrap percentile interval of the median ratio: resample runs
//      of L = ceil(n^(1/3)) consecutive rounds, so that load lasting several rounds (the
//      case (a) assumes away) stays together and widens the interval, as it should.
// A session whose first and second halves disagree (ratios_drifted) is not stopped
// early on a narrow interval: the stopping rule in runner/evaluate/timing/timer.cc keeps
// adding rounds until max_rounds or the time cap.
//
// How well it holds (bench/stats_coverage.cc, synthetic sessions with known ratios:
// lognormal jitter, shared drift, bursts of load that start and stop between the two
// runs of a round, bimodal runs, a linear trend; figures in docs/evaluation.md): the
// interval contains the true ratio in at least 95% of sessions in every scenario, and
// A/A sessions exclude 1.0 in at most 5%.
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

std::vector<double> round_ratios(const std::vector<double>& baseline, const std::vector<double>& candidate) {
  std::vector<double> ratios(baseline.size());
  for (std::size_t i = 0; i < baseline.size(); ++i) ratios[i] = baseline[i] / candidate[i];
  return ratios;
}

// (a) above: [x_(k), x_(n+1-k)] of the sorted values, k the largest with
// P(Bin(n, 1/2) < k) <= 0.025 (at least 1).
std::pair<double, double> order_statistic_interval(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  // k - 1 is the largest j with P(Bin(n, 1/2) <= j) <= 0.025; the pmf is summed from
  // log-gamma so that large n does not overflow. Below 6 values no j qualifies: k = 1.
  const double dn = static_cast<double>(n);
  std::size_t k = 1;
  double cdf = 0;
  for (std::size_t j = 0; j < n; ++j) {
    const double dj = static_cast<double>(j);
    cdf += std::exp(std::lgamma(dn + 1) - std::lgamma(dj + 1) - std::lgamma(dn - dj + 1) + dn * std::log(0.5));
    if (cdf > 0.025) break;
    k = j + 1;
  }
  return {values[k - 1], values[n - k]};
}

// (b) above: the 2.5th and 97.5th percentiles of the median ratio over moving-block
// resamples of the rounds, in measured order.
std::pair<double, double> block_bootstrap_interval(const std::vector<double>& ratios, int resamples,
                                                   std::uint64_t seed) {
  const std::size_t n = ratios.size();
  const auto block = static_cast<std::size_t>(std::ceil(std::cbrt(static_cast<double>(n))));
  const std::size_t starts = n - block + 1;
  RoundPicker pick(starts, seed);
  std::vector<double> resample(n), medians(static_cast<std::size_t>(resamples));
  for (double& m : medians) {
    std::size_t filled = 0;
    while (filled < n) {
      const std::size_t start = pick();
      for (std::size_t i = 0; i < block && filled < n; ++i) resample[filled++] = ratios[start + i];
    }
    m = median_in_place(resample);
  }
  return {quantile_in_place(medians, 0.025), quantile_in_place(medians, 0.975)};
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
  const std::vector<double> ratios = round_ratios(baseline, candidate);
  RatioInterval result;
  result.rounds = static_cast<int>(ratios.size());
  result.median = median(ratios);
  const auto [os_low, os_high] = order_statistic_interval(ratios);
  const auto [bb_low, bb_high] = block_bootstrap_interval(ratios, resamples, seed);
  result.low = std::min(os_low, bb_low);
  result.high = std::max(os_high, bb_high);
  return result;
}

bool ratios_drifted(const std::vector<double>& baseline, const std::vector<double>& candidate) {
  check_inputs(baseline, candidate, 1);
  const std::vector<double> ratios = round_ratios(baseline, candidate);
  const std::size_t half = ratios.size() / 2;
  if (half < 6) return false;  // too few rounds per half for a 95% median interval
  const auto first = order_statistic_interval({ratios.begin(), ratios.begin() + static_cast<std::ptrdiff_t>(half)});
  const auto second = order_statistic_interval({ratios.end() - static_cast<std::ptrdiff_t>(half), ratios.end()});
  return first.second < second.first || second.second < first.first;
}

RatioInterval ratio_of_medians_interval(const std::vector<double>& baseline,
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
