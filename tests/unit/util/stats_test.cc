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

TEST(PairedRatioInterval, MedianIsTheRatioOfMedians) {
  const RatioInterval r = paired_ratio_interval({2, 4, 6}, {1, 2, 3});
  EXPECT_DOUBLE_EQ(r.median, 2.0);
  EXPECT_EQ(r.rounds, 3);
  // Every pair has ratio exactly 2, yet the interval is over medians, and medians of
  // paired resamples keep that ratio: the interval collapses onto 2.
  EXPECT_DOUBLE_EQ(r.low, 2.0);
  EXPECT_DOUBLE_EQ(r.high, 2.0);
}

TEST(PairedRatioInterval, IsDeterministicForASeed) {
  Normal normal(7);
  const Timings t = synthetic_rounds(normal, 20, 1.2);
  const RatioInterval a = paired_ratio_interval(t.baseline, t.candidate);
  const RatioInterval b = paired_ratio_interval(t.baseline, t.candidate);
  EXPECT_EQ(a.low, b.low);
  EXPECT_EQ(a.high, b.high);
  const RatioInterval other = paired_ratio_interval(t.baseline, t.candidate, 2000, 12345);
  EXPECT_TRUE(other.low != a.low || other.high != a.high);
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

// How often the 95% interval contains the true ratio. Under this model the percentile
// interval of a ratio of *paired* medians is conservative: over many seeds its
// coverage averages about 0.988 (a single median's interval, by contrast, is near
// 0.95), so the upper bound is 0.995: conservative is the safe side for a speedup claim. The normal generator above is
// portable, so this seed gives the same figure on every build.
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
  EXPECT_GE(coverage, 0.88);
  EXPECT_LE(coverage, 0.995);
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
