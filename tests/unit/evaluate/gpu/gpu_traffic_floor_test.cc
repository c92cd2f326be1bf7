#include "runner/evaluate/gpu/traffic_floor.h"

#include <gtest/gtest.h>

namespace maxcode {
namespace {

NcuKernel profiled(double dram_bytes) {
  NcuKernel k;
  k.name = "blur_kernel(const float *, float *, int, int)";
  k.launches = 1;
  k.dram_bytes = dram_bytes;
  return k;
}

TEST(TrafficFloor, NoTrafficAgainstTheOriginalsIsRejectedWithTheFigures) {
  const std::string why = check_traffic_floor({profiled(41.5e6)}, {profiled(0)});
  EXPECT_NE(why.find("0.0 MB moved per call; the original moves 41.5 MB"), std::string::npos) << why;
}

TEST(TrafficFloor, LessTrafficFromBetterReuseIsAllowed) {
  EXPECT_EQ(check_traffic_floor({profiled(41.5e6)}, {profiled(8.4e6)}), "");
}

TEST(TrafficFloor, SilentWithoutMeasurementsOrForTinyOriginals) {
  EXPECT_EQ(check_traffic_floor({}, {profiled(0)}), "");
  EXPECT_EQ(check_traffic_floor({profiled(41.5e6)}, {}), "");
  EXPECT_EQ(check_traffic_floor({profiled(0.5e6)}, {profiled(0)}), "");
}

TEST(TrafficFloor, BytesPerCallSumsTheKernels) {
  EXPECT_DOUBLE_EQ(bytes_per_call({profiled(1e6), profiled(2e6)}), 3e6);
}

}  // namespace
}  // namespace maxcode
