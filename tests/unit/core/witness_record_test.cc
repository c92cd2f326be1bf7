#include "runner/core/witness_record.h"

#include <gtest/gtest.h>

namespace maxcode {
namespace {

WitnessRecord agreeing() {
  WitnessRecord r;
  r.status = WitnessStatus::kAgrees;
  r.tolerance = 0.25;
  r.original = {40, 23.1e6, 40, 22.0e6, 40, 23.1e6, 22.0e6, true};
  r.candidate = {40, 10.0e6, 40, 9.4e6, 40, 10.0e6, 9.4e6, true};
  r.claimed_speedup = 2.35;
  r.counted_share = 1;
  r.expected_speedup = 2.35;
  r.witness_speedup = 2.31;
  r.all_kernels_speedup = 2.31;
  return r;
}

TEST(WitnessRecord, JsonRoundTrip) {
  WitnessRecord r = agreeing();
  r.note = "a note";
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(to_json(witness_record_from_json(j)), j);
  EXPECT_EQ(j["original"]["ncu_launches"], 40);
  EXPECT_DOUBLE_EQ(j["original"]["ncu_ns"].get<double>(), 23.1e6);
  EXPECT_NEAR(j["original"]["agreement"].get<double>(), 23.1 / 22.0, 1e-12);
  EXPECT_EQ(j["original"]["counted_launches"], 40);
  EXPECT_EQ(j["original"]["per_launch"], true);
  EXPECT_EQ(j["all_kernels_speedup"], 2.31);
  EXPECT_EQ(j["status"], "agrees");
}

TEST(WitnessRecord, DescribeStatesBothSpeedupsAndTheTolerance) {
  WitnessRecord r = agreeing();
  EXPECT_EQ(describe(r), "witness: ncu 2.31x vs claimed 2.35x (agree within 25%)");
  // A claim over part of the kernel time is set against ncu's on that part, and also
  // stated over all kernel time, as ncu sees it.
  r.counted_share = 0.5;
  r.expected_speedup = 1.4;
  r.all_kernels_speedup = 1.38;
  EXPECT_EQ(describe(r),
            "witness: ncu 2.31x vs claimed 2.35x on the launches the timer counts (over all kernel time: ncu 1.38x, "
            "the claim 1.40x were the other launches unchanged) (agree within 25%)");
  // ncu's launches not matched to the timer's: said so.
  r.candidate.per_launch = false;
  EXPECT_EQ(describe(r),
            "witness: ncu 2.31x vs claimed 2.35x on the launches the timer counts (over all kernel time: ncu 1.38x, "
            "the claim 1.40x were the other launches unchanged) (ncu's launches not matched to the timer's: its time "
            "split in CUPTI's proportions) (agree within 25%)");
  WitnessRecord none;
  none.status = WitnessStatus::kNotWitnessed;
  none.note = "Nsight Compute (ncu) not found";
  EXPECT_EQ(describe(none), "not witnessed: Nsight Compute (ncu) not found");
  none.status = WitnessStatus::kRejected;
  none.note = "out-of-process witness (Nsight Compute): x";
  EXPECT_EQ(describe(none), "witness rejected: out-of-process witness (Nsight Compute): x");
}

}  // namespace
}  // namespace maxcode
