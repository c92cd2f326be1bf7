#include "runner/evaluate/call_records.h"

#include <gtest/gtest.h>

#include "runner/util/files.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

using testing::TempDir;

TEST(CallRecords, ReadsCallsArgumentsAndOutputs) {
  TempDir dir;
  write_text(dir / "calls.txt",
             "call 0 1500000\n"
             "arg 0 in in 0x10 4 00000000000000aa 00000000000000aa\n"
             "arg 0 out out 0x20 4 ffffffffffffffff 00000000000000bb\n"
             "out 0 out unsigned char 4 1 0\n"
             "call 1 2000\n");
  auto records = read_call_records(dir.path());
  ASSERT_EQ(records.size(), 2u);
  EXPECT_DOUBLE_EQ(records[0].seconds, 1.5e-3);
  ASSERT_EQ(records[0].args.size(), 2u);
  EXPECT_TRUE(records[0].args[0].input);
  EXPECT_FALSE(records[0].args[1].input);
  EXPECT_EQ(records[0].args[1].exit_hash, "00000000000000bb");
  ASSERT_EQ(records[0].outputs.size(), 1u);
  EXPECT_EQ(records[0].outputs[0].type, "unsigned char");
  EXPECT_EQ(records[0].outputs[0].kept, 4u);
  EXPECT_EQ(records[0].outputs[0].file, dir / "out-0-out.bin");
  const std::vector<double> seconds = call_work_seconds(records);
  ASSERT_EQ(seconds.size(), 2u);
  EXPECT_NEAR(seconds[1], 2e-6, 1e-15);
}

TEST(CallRecords, ACallsWorkIsItsCpuTimeWhereThatIsShorter) {
  TempDir dir;
  // Call 0 was descheduled (8 ms by the clock, 120 us of CPU); call 1 waited for a
  // helper thread of the process (CPU 3 ms over 1 ms of wall time); call 2 is from a shim
  // that recorded no CPU time.
  write_text(dir / "calls.txt",
             "call 0 8000000 500 120000\n"
             "call 1 1000000 500 3000000\n"
             "call 2 2000000 500\n");
  auto records = read_call_records(dir.path());
  ASSERT_EQ(records.size(), 3u);
  EXPECT_NEAR(records[0].cpu_s, 120e-6, 1e-12);
  EXPECT_LT(records[2].cpu_s, 0);
  const std::vector<double> work = call_work_seconds(records);
  EXPECT_NEAR(work[0], 120e-6, 1e-12);
  EXPECT_NEAR(work[1], 1e-3, 1e-12);
  EXPECT_NEAR(work[2], 2e-3, 1e-12);
}

TEST(CallRecords, NoFileMeansNoCalls) {
  TempDir dir;
  EXPECT_TRUE(read_call_records(dir.path()).empty());
}

TEST(CallRecords, ABadLineNamesFileAndLine) {
  TempDir dir;
  write_text(dir / "calls.txt", "call 0 5\ncall 7 5\n");
  try {
    read_call_records(dir.path());
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("calls.txt:2"), std::string::npos) << e.what();
  }
}

// Calls made from several threads reach the file in any order; each call's lines stay
// together, and the shim's own time is kept apart from the target's.
TEST(CallRecords, CallsFromThreadsAreSortedAndTheShimsTimeIsApart) {
  TempDir dir;
  write_text(dir / "calls.txt",
             "call 1 2000 300\npost 1 700\ncall 0 1000 100\nextent 0 bins 1024\npost 0 900\n");
  auto records = read_call_records(dir.path());
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].call, 0);
  EXPECT_NEAR(records[0].seconds, 1e-6, 1e-15);
  ASSERT_EQ(records[0].extents.size(), 1u);
  EXPECT_EQ(records[0].extents[0].bytes, 1024u);
  EXPECT_NEAR(shim_overhead_s(records), (300 + 700 + 100 + 900) * 1e-9, 1e-15);
}

// A probe (a call of the target right before the recorded one, shim_runtime.cc) is kept
// with the call it preceded: no call of its own, and its time apart from the call's and
// the shim's.
TEST(CallRecords, AProbeBelongsToTheCallItPreceded) {
  TempDir dir;
  write_text(dir / "calls.txt", "call 0 1000 100\ncall 1 2000 300\nprobe 1 1900 4000\npost 1 700\n");
  auto records = read_call_records(dir.path());
  ASSERT_EQ(records.size(), 2u);
  EXPECT_FALSE(records[0].probed);
  EXPECT_TRUE(records[1].probed);
  EXPECT_NEAR(records[1].probe_s, 1.9e-6, 1e-15);
  EXPECT_NEAR(records[1].probe_gap_s, 4e-6, 1e-15);
  EXPECT_NEAR(records[1].seconds, 2e-6, 1e-15);
  EXPECT_NEAR(shim_overhead_s(records), (100 + 300 + 700) * 1e-9, 1e-15);
  write_text(dir / "calls.txt", "call 0 1000 100\nprobe 0 5 5\nprobe 0 5 5\n");
  EXPECT_THROW(read_call_records(dir.path()), std::runtime_error);
}

// The file is written inside the run, where candidate code can replace it: a link is
// never followed (it could point at a file the sandbox hides), a call given twice is an
// error.
TEST(CallRecords, ALinkOrACallGivenTwiceIsRefused) {
  TempDir dir;
  write_text(dir / "secret", "call 0 5\n");
  std::filesystem::create_symlink(dir / "secret", dir / "calls.txt");
  EXPECT_THROW(read_call_records(dir.path()), std::runtime_error);
  std::filesystem::remove(dir / "calls.txt");
  write_text(dir / "calls.txt", "call 0 5\ncall 0 6\n");
  EXPECT_THROW(read_call_records(dir.path()), std::runtime_error);
}

}  // namespace
}  // namespace maxcode
