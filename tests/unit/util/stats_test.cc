#include "runner/util/stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numbers>
#include <random>
#include <stdexcept>
#include <vector>

namespace maxcode {
namespace {

struct Timings {
  std::vector<double> baseline;
  std::vector<double> candidate;
};

// Standard normal deviates by Box-Muller on std::mt19937_64, whose output the standard
// fixes exactly; std::normal_distribution's algorithm varies between standard
// libraries, and the coverage figure below should be the same on every build.
class Normal {
 public:
  explicit Normal(std::uint64_t seed) : rng_(seed) {}
  double operator()(double sigma) {
    const double u1 = uniform_open(), u2 = uniform_open();
    return sigma * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  // Uniform in (0, 1): 53 random bits, centred in their cell so 0 never comes out.
  double uniform_open() { return (static_cast<double>(rng_() >> 11) + 0.5) * 0x1p-53; }
  std::mt19937_64 rng_;
};

// Synthetic A/B rounds shaped like real ones: every round has a drift factor shared by
// both of its samples (machine state changes between rounds), and the baseline adds
// its own lognormal jitter. The candidate is the baseline's time divided by `speedup`,
// times independent lognormal noise.
//
// All factors are lognormal, i.e. symmetric in log space, and independent, so the log
// of each side is symmetric about its median; hence median(candidate) =
// median(baseline) / speedup exactly: the true ratio of the medians is `speedup`.
Timings synthetic_rounds(Normal& normal, int rounds, double speedup, double jitter = 0.05,
                         double drift = 0.10) {
  Timings t;
  for (int i = 0; i < rounds; ++i) {
    const double shared = std::exp(normal(drift));
    const double base = shared * std::exp(normal(jitter));
    t.baseline.push_back(base);
    t.candidate.push_back(base / speedup * std::exp(normal(jitter)));
  }
  return t;
}

// A/A: both sides drawn independently from the same distribution (same drift).
Timings same_distribution(Normal& normal, int rounds) {
  Timings t;
  for (int i = 0; i < rounds; ++i) {
    const double shared = std::exp(normal(0.10));
    t.baseline.push_back(shared * std::exp(normal(0.05)));
    t.candidate.push_back(shared * std::exp(normal(0.05)));
  }
  return t;
}

TEST(Median, OddCountIsTheMiddleValue) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({5}), 5);
}

TEST(Median, EvenCountIsTheMeanOfTheTwoMiddleValues) {
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({1, 2}), 1.5);
  EXPECT_DOUBLE_EQ(median({7, 7, 1, 100}), 7);
}

TEST(Median, EmptyThrows) { EXPECT_THROW(median({}), std::invalid_argument); }

TEST(PairedRatioInterval, MedianIsTheMedianOfPerRoundRatios) {
  const RatioInterval r = paired_ratio_interval({2, 4, 6}, {1, 2, 3});
  EXPECT_DOUBLE_EQ(r.median, 2.0);
  EXPECT_EQ(r.rounds, 3);
  // Every pair has ratio exactly 2: the interval collapses onto 2.
  EXPECT_DOUBLE_EQ(r.low, 2.0);
  EXPECT_DOUBLE_EQ(r.high, 2.0);
  // Per-round ratios 1, 3, 2: their median, not median(b) / median(c) = 4 / 2.
  const RatioInterval m = paired_ratio_interval({1, 6, 4}, {1, 2, 2});
  EXPECT_DOUBLE_EQ(m.median, 2.0);
  EXPECT_DOUBLE_EQ(ratio_of_medians_interval({1, 6, 4}, {1, 2, 2}).median, 2.0);
  const RatioInterval e = paired_ratio_interval({1, 6, 4, 10}, {1, 2, 2, 10});
  EXPECT_DOUBLE_EQ(e.median, 1.5);  // ratios 1, 3, 2, 1
}

// The case that made the estimator change: bimodal load (runs jumping between ~0.30 s
// and ~0.48 s) that hits one run of a round more often on one side by chance. The
// ratio of medians reads the imbalance as a speedup; the per-round ratios do not.
TEST(PairedRatioInterval, BimodalLoadOnOneSideIsNotASpeedup) {
  // A/A: the same program; 6 of 11 candidate runs were slow, 3 of 11 baseline runs.
  const std::vector<double> b{0.30, 0.48, 0.30, 0.30, 0.48, 0.30, 0.30, 0.48, 0.30, 0.30, 0.30};
  const std::vector<double> c{0.30, 0.48, 0.48, 0.30, 0.48, 0.48, 0.30, 0.48, 0.30, 0.48, 0.30};
  const RatioInterval before = ratio_of_medians_interval(b, c);
  const RatioInterval now = paired_ratio_interval(b, c);
  EXPECT_DOUBLE_EQ(before.median, 0.30 / 0.48);  // reads as a 1.6x difference
  EXPECT_DOUBLE_EQ(now.median, 1.0);
  EXPECT_TRUE(now.contains(1.0)) << now.low << " .. " << now.high;
  EXPECT_DOUBLE_EQ(noise_floor(now), 1.0);
}

// Below 6 rounds no order-statistic interval reaches 95%: the interval is the whole
// range of the ratios (and at least that).
TEST(PairedRatioInterval, FewRoundsGiveTheRangeOfTheRatios) {
  const RatioInterval r = paired_ratio_interval({1.0, 1.0, 1.0, 1.0, 1.0}, {1.0, 0.5, 0.8, 0.9, 0.7});
  EXPECT_DOUBLE_EQ(r.low, 1.0);
  EXPECT_DOUBLE_EQ(r.high, 2.0);
}

// At n = 10 the order-statistic interval is [r_(2), r_(9)] (coverage 97.9%): the most
// extreme ratio on each side cannot move it.
TEST(PairedRatioInterval, TenRoundsIgnoreTheMostExtremeRatioOnEachSide) {
  std::vector<double> b(10, 1.0), c;
  for (double r : {0.01, 1.00, 1.01, 1.02, 1.03, 1.04, 1.05, 1.06, 1.07, 100.0}) c.push_back(1.0 / r);
  const RatioInterval i = paired_ratio_interval(b, c);
  EXPECT_LE(i.low, 1.00 + 1e-12);
  EXPECT_GE(i.high, 1.07 - 1e-12);
  EXPECT_GT(i.low, 0.01);     // not the outlier
  EXPECT_LT(i.high, 100.0);
}

TEST(RatiosDrifted, HalvesThatDisagreeAreDriftAndAStableSessionIsNot) {
  Normal normal(17);
  Timings stable = synthetic_rounds(normal, 24, 1.2, 0.02, 0.05);
  EXPECT_FALSE(ratios_drifted(stable.baseline, stable.candidate));
  // The candidate gets 30% slower halfway through (a change of load on its side).
  Timings shifted = stable;
  for (std::size_t i = 12; i < 24; ++i) shifted.candidate[i] *= 1.3;
  EXPECT_TRUE(ratios_drifted(shifted.baseline, shifted.candidate));
  // Too few rounds per half to tell: never called drift.
  Timings short_session = synthetic_rounds(normal, 10, 1.2);
  for (std::size_t i = 5; i < 10; ++i) short_session.candidate[i] *= 1.3;
  EXPECT_FALSE(ratios_drifted(short_session.baseline, short_session.candidate));
}

TEST(PairedRatioInterval, IsDeterministicForASeed) {
  Normal normal(7);
  const Timings t = synthetic_rounds(normal, 20, 1.2);
  const RatioInterval a = paired_ratio_interval(t.baseline, t.candidate);
  const RatioInterval b = paired_ratio_interval(t.baseline, t.candidate);
  EXPECT_EQ(a.low, b.low);
  EXPECT_EQ(a.high, b.high);
  // The seed drives the bootstrap resamples (here visible in the earlier estimator,
  // whose interval is the bootstrap alone).
  const RatioInterval before = ratio_of_medians_interval(t.baseline, t.candidate);
  const RatioInterval other = ratio_of_medians_interval(t.baseline, t.candidate, 2000, 12345);
  EXPECT_TRUE(other.low != before.low || other.high != before.high);
}

TEST(PairedRatioInterval, PairingRemovesSharedDrift) {
  // Strong drift shared within rounds, little jitter: a paired interval is narrow,
  // while shifting the candidate's rounds by one (breaking the pairs) widens it.
  Normal normal(11);
  Timings t = synthetic_rounds(normal, 30, 1.5, /*jitter=*/0.01, /*drift=*/0.3);
  const RatioInterval paired = paired_ratio_interval(t.baseline, t.candidate);
  std::rotate(t.candidate.begin(), t.candidate.begin() + 1, t.candidate.end());
  const RatioInterval unpaired = paired_ratio_interval(t.baseline, t.candidate);
  EXPECT_LT(paired.relative_width() * 3, unpaired.relative_width());
}

// How often the 95% interval contains the true ratio. The order-statistic part alone
// covers at least 95% for independent rounds (96.5% at n = 15); the block bootstrap can
// only widen it. Conservative is the safe side for a speedup claim; the upper bound
// keeps it from being useless. The normal generator above is portable, so this seed
// gives the same figure on every build. (bench/stats_coverage.cc has the other noise
// shapes.)
TEST(PairedRatioInterval, CoverageOfTheTrueRatioIsNearNominal) {
  constexpr int kTrials = 400;
  constexpr int kRounds = 15;
  constexpr double kTrueRatio = 1.3;
  Normal normal(20240601);
  int covered = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    const Timings t = synthetic_rounds(normal, kRounds, kTrueRatio);
    if (paired_ratio_interval(t.baseline, t.candidate).contains(kTrueRatio)) ++covered;
  }
  const double coverage = static_cast<double>(covered) / kTrials;
  std::printf("95%% interval coverage over %d trials of %d rounds: %.3f\n", kTrials, kRounds,
              coverage);
  EXPECT_GE(coverage, 0.93);
  EXPECT_LE(coverage, 0.998);
}

TEST(PairedRatioInterval, AaRunContainsOneAndIsNotSignificant) {
  Normal normal(3);
  const Timings t = same_distribution(normal, 20);
  const RatioInterval aa = paired_ratio_interval(t.baseline, t.candidate);
  EXPECT_TRUE(aa.contains(1.0)) << aa.low << " .. " << aa.high;
  EXPECT_FALSE(significant(aa, 1.05, 1.0));
  EXPECT_FALSE(significant(aa, 1.05, noise_floor(aa)));
}

TEST(PairedRatioInterval, ClearTwofoldSpeedupIsSignificant) {
  Normal normal(5);
  const Timings aa_t = same_distribution(normal, 15);
  const double floor = noise_floor(paired_ratio_interval(aa_t.baseline, aa_t.candidate));
  const Timings t = synthetic_rounds(normal, 15, 2.0);
  const RatioInterval ab = paired_ratio_interval(t.baseline, t.candidate);
  EXPECT_NEAR(ab.median, 2.0, 0.1);
  EXPECT_TRUE(ab.contains(ab.median));
  EXPECT_TRUE(significant(ab, 1.05, floor)) << ab.low << " vs floor " << floor;
}

TEST(PairedRatioInterval, RejectsBadInput) {
  EXPECT_THROW(paired_ratio_interval({}, {}), std::invalid_argument);
  EXPECT_THROW(paired_ratio_interval({1, 2}, {1}), std::invalid_argument);
  EXPECT_THROW(paired_ratio_interval({1, 2}, {1, 0}), std::invalid_argument);
  EXPECT_THROW(paired_ratio_interval({1, NAN}, {1, 2}), std::invalid_argument);
  EXPECT_THROW(paired_ratio_interval({1}, {1}, 0), std::invalid_argument);
}

TEST(PairedRatioInterval, IsFast) {
  // 2000 resamples of 40 pairs runs once per evaluation step; it must stay cheap.
  Normal normal(9);
  const Timings t = synthetic_rounds(normal, 40, 1.1);
  const auto start = std::chrono::steady_clock::now();
  paired_ratio_interval(t.baseline, t.candidate, 2000);
  const auto ms = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - start).count();
  std::printf("2000 resamples of 40 pairs: %.2f ms\n", ms);
  // Loose bound: unoptimised or sanitised builds are several times slower than -O2.
  EXPECT_LT(ms, 100.0);
}

TEST(NoiseFloor, IsTheApparentSpeedupOfTheEstimateEitherWayAndAtLeastOne) {
  // The interval's width does not matter: sampling noise is the A/B interval's business.
  EXPECT_DOUBLE_EQ(noise_floor(RatioInterval{1.03, 0.80, 1.30, 10}), 1.03);
  EXPECT_DOUBLE_EQ(noise_floor(RatioInterval{0.95, 0.90, 1.01, 10}), 1.0 / 0.95);
  EXPECT_DOUBLE_EQ(noise_floor(RatioInterval{1.0, 0.5, 2.0, 10}), 1.0);
  EXPECT_DOUBLE_EQ(noise_floor(RatioInterval{1.0, 1.0, 1.0, 10}), 1.0);
}

TEST(Significant, NeedsLowerBoundAboveBothMinimumAndFloor) {
  RatioInterval ab;
  ab.median = 1.3;
  ab.low = 1.2;
  ab.high = 1.4;
  EXPECT_TRUE(significant(ab, 1.05, 1.1));
  EXPECT_FALSE(significant(ab, 1.25, 1.1));  // below the configured minimum
  EXPECT_FALSE(significant(ab, 1.05, 1.2));  // not strictly above the noise floor
}

}  // namespace
}  // namespace maxcode
