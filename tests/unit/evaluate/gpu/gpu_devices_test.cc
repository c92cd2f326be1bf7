// GPU selection from CUDA_VISIBLE_DEVICES and the per-GPU timing lock.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "runner/evaluate/gpu/clock_monitor.h"
#include "runner/evaluate/gpu/devices.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

TEST(GpuDevices, VisibleDevicesListIsSplitAndTrimmed) {
  auto devices = visible_gpus("0, 2,GPU-fbfaf365-bdd4-738d-9d4a-3d254170478b,");
  ASSERT_EQ(devices.size(), 3u);
  EXPECT_EQ(devices[0].visible, "0");
  EXPECT_EQ(devices[1].visible, "2");
  EXPECT_EQ(devices[2].visible, "GPU-fbfaf365-bdd4-738d-9d4a-3d254170478b");
  EXPECT_NE(devices[1].label().find("GPU 2"), std::string::npos);
}

TEST(GpuDevices, AnEmptyListHidesEveryGpu) { EXPECT_TRUE(visible_gpus("").empty()); }

TEST(GpuDevices, UnsetMeansEveryGpuOrOneDefault) {
  auto devices = visible_gpus(nullptr);
  ASSERT_FALSE(devices.empty());
  if (!Nvml::instance().available()) {
    ASSERT_EQ(devices.size(), 1u);
    EXPECT_EQ(devices[0].visible, "");  // leave CUDA's choice alone
  }
}

TEST(GpuDevices, LockKeysDifferPerDevice) {
  auto devices = visible_gpus("0,1");
  EXPECT_NE(devices[0].lock_key(), devices[1].lock_key());
}

TEST(TimingLock, SecondHolderWaitsForTheFirst) {
  testing::TempDir dir;
  std::atomic<bool> second_has_it{false};
  auto first = std::make_unique<TimingLock>(dir.path(), "GPU-test");
  std::thread waiter([&] {
    TimingLock second(dir.path(), "GPU-test");
    second_has_it = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(second_has_it) << "the lock let a second timing session in";
  first.reset();
  waiter.join();
  EXPECT_TRUE(second_has_it);
}

TEST(TimingLock, OtherGpusDoNotWait) {
  testing::TempDir dir;
  TimingLock a(dir.path(), "GPU-a");
  std::atomic<bool> done{false};
  std::thread other([&] {
    TimingLock b(dir.path(), "GPU-b");
    done = true;
  });
  other.join();
  EXPECT_TRUE(done);
}

TEST(TimingLock, AnUnwritableDirectoryIsAClearError) {
  try {
    TimingLock lock("/nonexistent/maxcode", "GPU-x");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/maxcode"), std::string::npos) << e.what();
  }
}

TEST(ClockMonitor, WithoutADeviceReadsNothing) {
  ClockMonitor monitor(std::nullopt);
  EXPECT_FALSE(monitor.stop().has_value());
}

TEST(Throttle, ReasonsAreNamed) {
  EXPECT_EQ(throttle_reason_names(0x4 | 0x40), "power cap, HW thermal");
  EXPECT_EQ(throttle_reason_names(0), "");
}

}  // namespace
}  // namespace maxcode
