// GPU selection from CUDA_VISIBLE_DEVICES and the per-GPU timing lock.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

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

// While a holder in `held` mode has the lock, a request in `asked` mode waits for it to
// let go, then gets it.
void ExpectWaitsForTheHolder(TimingLock::Mode held, TimingLock::Mode asked, const char* what) {
  testing::TempDir dir;
  std::atomic<bool> second_has_it{false};
  auto first = std::make_unique<TimingLock>(dir.path(), "GPU-test", held);
  std::thread waiter([&] {
    TimingLock second(dir.path(), "GPU-test", asked);
    second_has_it = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(second_has_it) << what;
  first.reset();
  waiter.join();
  EXPECT_TRUE(second_has_it);
}

TEST(TimingLock, SecondHolderWaitsForTheFirst) {
  ExpectWaitsForTheHolder(TimingLock::Mode::kExclusive, TimingLock::Mode::kExclusive,
                          "the lock let a second timing session in");
}

// Check runs that overlap one another hold the lock shared without a gap (three
// processes' checks on one GPU, or one process's parallel checks): a session asking for
// it must still get it while they go on, not when they stop. Plain flock lets later
// shared requests past a waiting exclusive one, and the session here waited all 6 s.
TEST(TimingLock, AWaitingSessionIsNotStarvedByOverlappingChecks) {
  testing::TempDir dir;
  const auto start = std::chrono::steady_clock::now();
  const auto checks_end = start + std::chrono::seconds(6);
  std::atomic<bool> session_done{false};
  std::vector<std::thread> checks;
  for (int i = 0; i < 3; ++i)
    checks.emplace_back([&, i] {
      std::this_thread::sleep_for(std::chrono::milliseconds(15 * i));  // staggered: always one holder
      while (!session_done && std::chrono::steady_clock::now() < checks_end) {
        TimingLock check(dir.path(), "GPU-test", TimingLock::Mode::kShared);
        std::this_thread::sleep_for(std::chrono::milliseconds(40));
      }
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  {
    TimingLock session(dir.path(), "GPU-test");
    const auto got = std::chrono::steady_clock::now();
    EXPECT_LT(got, checks_end - std::chrono::seconds(2))
        << "the session waited " << std::chrono::duration<double>(got - start).count()
        << " s: until the checks stopped";
    session_done = true;
  }
  for (auto& t : checks) t.join();
}

// While a session holds the lock, a check waits for it to end.
TEST(TimingLock, ACheckWaitsForTheSession) {
  ExpectWaitsForTheHolder(TimingLock::Mode::kExclusive, TimingLock::Mode::kShared,
                          "a check ran inside a session's rounds");
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
