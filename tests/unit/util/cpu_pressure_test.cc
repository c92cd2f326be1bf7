#include "runner/util/cpu_pressure.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>

namespace maxcode {
namespace {

TEST(CpuPressure, ReadsTheSomeLinesTotalInSeconds) {
  const auto s = parse_cpu_pressure(
      "some avg10=0.02 avg60=3.47 avg300=6.83 total=7663142930\n"
      "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(*s, 7663.142930);
}

TEST(CpuPressure, NoSomeLineOrNoTotalIsUnknown) {
  EXPECT_FALSE(parse_cpu_pressure("").has_value());
  EXPECT_FALSE(parse_cpu_pressure("full avg10=0.00 avg60=0.00 avg300=0.00 total=12\n").has_value());
  EXPECT_FALSE(parse_cpu_pressure("some avg10=0.02 avg60=3.47 avg300=6.83\n").has_value());
  EXPECT_FALSE(parse_cpu_pressure("some avg10=0.02 total=x12\n").has_value());
}

TEST(CpuPressure, IsThePartOfTheWallTimeSpentWaiting) {
  EXPECT_DOUBLE_EQ(*cpu_pressure(10.0, 10.5, 2.0), 0.25);
  EXPECT_DOUBLE_EQ(*cpu_pressure(10.0, 13.0, 2.0), 1.0);  // several tasks waiting: at most all of it
  EXPECT_FALSE(cpu_pressure(std::nullopt, 10.0, 2.0).has_value());
  EXPECT_FALSE(cpu_pressure(10.0, 10.5, 0.0).has_value());
}

// More busy threads than CPUs: some of them wait for a CPU nearly all the time, and the
// kernel's figure says so.
TEST(CpuPressure, RisesWhileMoreThreadsThanCpusRun) {
  if (!std::filesystem::exists("/proc/pressure/cpu") || !cpu_waited_s())
    GTEST_SKIP() << "this kernel exposes no /proc/pressure/cpu";
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  const auto before = cpu_waited_s();
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < 2 * cpus + 1; ++i)
    threads.emplace_back([start] {
      volatile unsigned long spin = 0;
      while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(600)) ++spin;
    });
  for (auto& t : threads) t.join();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto pressure = cpu_pressure(before, cpu_waited_s(), wall);
  ASSERT_TRUE(pressure.has_value());
  EXPECT_GT(*pressure, 0.5) << "threads: " << 2 * cpus + 1 << ", CPUs: " << cpus;
}

}  // namespace
}  // namespace maxcode
