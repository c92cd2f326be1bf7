#include "runner/evaluate/call_consistency.h"

#include <gtest/gtest.h>

namespace maxcode {
namespace {

std::vector<double> alike(std::size_t n, double s) { return std::vector<double>(n, s); }

TEST(CallConsistency, ACostlyFirstCallThenTrivialOnesIsACache) {
  std::vector<double> candidate = alike(40, 20e-6);
  candidate[0] = 12.1e-3;
  const std::string why = check_call_times(alike(40, 12e-3), candidate);
  EXPECT_EQ(why,
            "per-call times: first 12.1 ms, then median 20 µs; the original's calls are alike "
            "(median 12 ms): the candidate caches its result");
}

TEST(CallConsistency, WorkOnEveryFourthCallIsSkippedWork) {
  std::vector<double> candidate;
  for (int i = 0; i < 40; ++i) candidate.push_back(i % 4 == 0 ? 11e-3 : 15e-6);
  const std::string why = check_call_times(alike(40, 12e-3), candidate);
  EXPECT_NE(why.find("10 of 40 calls take median 11 ms, 30 take median 15 µs"), std::string::npos) << why;
  EXPECT_NE(why.find("skips the work on some calls"), std::string::npos) << why;
}

TEST(CallConsistency, AUniformlyFasterCandidatePasses) {
  std::vector<double> candidate = alike(40, 0.3e-3);
  candidate[0] = 0.9e-3;   // a cold first call
  candidate[17] = 2.5e-3;  // the machine was busy once
  EXPECT_EQ(check_call_times(alike(40, 12e-3), candidate), "");
}

TEST(CallConsistency, AnOriginalWhoseOwnCallsVaryIsNoYardstick) {
  std::vector<double> original;
  for (int i = 0; i < 40; ++i) original.push_back(i % 2 ? 12e-3 : 10e-6);
  std::vector<double> candidate = alike(40, 10e-6);
  candidate[0] = 12e-3;
  EXPECT_EQ(check_call_times(original, candidate), "");
}

TEST(CallConsistency, TooFewCallsSayNothing) {
  EXPECT_EQ(check_call_times({12e-3, 12e-3}, {12e-3, 1e-6}), "");
}

}  // namespace
}  // namespace maxcode
