// compute-sanitizer: the real racecheck report of a racy kernel, memcheck outputs clean
// and with errors (program output in between), several processes, and a run that died
// before its summary.
#include <gtest/gtest.h>

#include "runner/evaluate/gpu/sanitizer.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

using testing::read_file;
using testing::source_path;

// memcheck on a kernel that writes past its array, shaped like compute-sanitizer 2025's.
const char* kMemcheckErrors =
    "========= COMPUTE-SANITIZER\n"
    "oob: start\n"
    "========= Invalid __global__ write of size 4 bytes\n"
    "=========     at oob(float *, int)+0x70\n"
    "=========     by thread (0,0,0) in block (4,0,0)\n"
    "=========     Address 0x7f4c5e000400 is out of bounds\n"
    "=========     and is 1 bytes after the nearest allocation at 0x7f4c5e000000 of size 1024 bytes\n"
    "=========     Saved host backtrace up to driver entry point at kernel launch time\n"
    "=========         Host Frame: [0x2f3cf3] in libcuda.so.1\n"
    "=========         Host Frame: main [0x9a4b] in probe\n"
    "========= \n"
    "========= Invalid __global__ write of size 4 bytes\n"
    "=========     at oob(float *, int)+0x70\n"
    "=========     by thread (1,0,0) in block (4,0,0)\n"
    "=========     Saved host backtrace up to driver entry point at kernel launch time\n"
    "=========         Host Frame: [0x2f3cf3] in libcuda.so.1\n"
    "========= \n"
    "========= Program hit cudaErrorLaunchFailure (error 719) due to \"unspecified launch failure\" on CUDA API "
    "call to cudaDeviceSynchronize.\n"
    "=========     Saved host backtrace up to driver entry point at error\n"
    "=========         Host Frame: [0x1234] in libcudart.so.13\n"
    "========= \n"
    "oob: done\n"
    "========= ERROR SUMMARY: 3 errors\n";

TEST(Sanitizer, RealRacecheckReport) {
  auto r = parse_sanitizer_output(read_file(source_path("tests/fixtures/gpu/racecheck_racy.txt")), "racecheck");
  EXPECT_EQ(r.tool, "racecheck");
  EXPECT_TRUE(r.summary_seen);
  EXPECT_EQ(r.errors, 1);
  EXPECT_EQ(r.warnings, 0);
  EXPECT_FALSE(r.clean());
  EXPECT_EQ(r.excerpt,
            "Error: Race reported between Write access at racy(float *)+0x180\n"
            "    and Read access at racy(float *)+0x200 [65536 hazards]");
  EXPECT_EQ(describe(r),
            "racecheck: 1 error — Race reported between Write access at racy(float *)+0x180 and Read access at "
            "racy(float *)+0x200 [65536 hazards]");
}

TEST(Sanitizer, CleanRuns) {
  auto m = parse_sanitizer_output("========= COMPUTE-SANITIZER\nsum = 42\r\n========= ERROR SUMMARY: 0 errors\r\n",
                                  "memcheck");
  EXPECT_TRUE(m.summary_seen);
  EXPECT_EQ(m.errors, 0);
  EXPECT_TRUE(m.clean());
  EXPECT_EQ(m.excerpt, "");
  EXPECT_EQ(describe(m), "memcheck: clean");

  auto r = parse_sanitizer_output(
      "========= COMPUTE-SANITIZER\nok\n========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n",
      "racecheck");
  EXPECT_TRUE(r.clean());
  EXPECT_EQ(describe(r), "racecheck: clean");
}

TEST(Sanitizer, MemcheckErrorsWithoutHostBacktraces) {
  auto r = parse_sanitizer_output(kMemcheckErrors, "memcheck");
  EXPECT_TRUE(r.summary_seen);
  EXPECT_EQ(r.errors, 3);
  EXPECT_EQ(r.excerpt,
            "Invalid __global__ write of size 4 bytes\n"
            "    at oob(float *, int)+0x70\n"
            "    by thread (0,0,0) in block (4,0,0)\n"
            "    Address 0x7f4c5e000400 is out of bounds\n"
            "    and is 1 bytes after the nearest allocation at 0x7f4c5e000000 of size 1024 bytes\n"
            "\n"
            "Invalid __global__ write of size 4 bytes\n"
            "    at oob(float *, int)+0x70\n"
            "    by thread (1,0,0) in block (4,0,0)\n"
            "\n"
            "Program hit cudaErrorLaunchFailure (error 719) due to \"unspecified launch failure\" on CUDA API call "
            "to cudaDeviceSynchronize.");
  EXPECT_EQ(describe(r),
            "memcheck: 3 errors — Invalid __global__ write of size 4 bytes at oob(float *, int)+0x70 by thread "
            "(0,0,0) in block (4,0,0) Address 0x7f4c5e000400 is out of bounds and is 1 bytes after the nearest "
            "allocation at 0x7f4c5e000000 of size 1024 bytes");
}

TEST(Sanitizer, SummariesOfSeveralProcessesAddUp) {
  std::string two = std::string(kMemcheckErrors) + "========= ERROR SUMMARY: 0 errors\n" + kMemcheckErrors;
  EXPECT_EQ(parse_sanitizer_output(two, "memcheck").errors, 6);
  // racecheck's own summary counts, not an ERROR SUMMARY next to it.
  auto r = parse_sanitizer_output(
      "========= Warning: Race reported between Read access at k()+0x10\n"
      "=========     and Write access at k()+0x20 [2 hazards]\n"
      "========= RACECHECK SUMMARY: 2 hazards displayed (0 errors, 2 warnings)\n"
      "========= ERROR SUMMARY: 2 errors\n"
      "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n",
      "racecheck");
  EXPECT_EQ(r.errors, 1);
  EXPECT_EQ(r.warnings, 2);
  EXPECT_EQ(describe(r),
            "racecheck: 1 error, 2 warnings — Race reported between Read access at k()+0x10 and Write access at "
            "k()+0x20 [2 hazards]");
}

TEST(Sanitizer, NoSummaryMeansTheRunDied) {
  auto r = parse_sanitizer_output(
      "========= COMPUTE-SANITIZER\n"
      "========= Error: Target application terminated before first instrumented API call\n",
      "memcheck");
  EXPECT_FALSE(r.summary_seen);
  EXPECT_FALSE(r.clean());
  EXPECT_EQ(describe(r),
            "memcheck: no summary (the tool or the program crashed) — Target application terminated before first "
            "instrumented API call");
  auto empty = parse_sanitizer_output("", "racecheck");
  EXPECT_FALSE(empty.summary_seen);
  EXPECT_EQ(describe(empty), "racecheck: no summary (the tool or the program crashed)");
}

TEST(Sanitizer, ExcerptIsBounded) {
  std::string many = "========= COMPUTE-SANITIZER\n";
  for (int i = 0; i < 500; ++i)
    many += "========= Invalid __global__ read of size 4 bytes\n=========     at k()+0x" + std::to_string(i) +
            "\n========= \n";
  many += "========= ERROR SUMMARY: 500 errors\n";
  auto r = parse_sanitizer_output(many, "memcheck");
  EXPECT_EQ(r.errors, 500);
  EXPECT_LE(r.excerpt.size(), 4100u);
  EXPECT_GE(r.excerpt.size(), 3500u);
  EXPECT_TRUE(r.excerpt.ends_with("..."));
}

TEST(Sanitizer, CommandLine) {
  using V = std::vector<std::string>;
  EXPECT_EQ(sanitizer_argv("/cuda/bin/compute-sanitizer", "memcheck", "./bench 1"),
            (V{"/cuda/bin/compute-sanitizer", "--tool", "memcheck", "--target-processes", "all", "--error-exitcode",
               "86", "--leak-check", "no", "sh", "-c", "./bench 1"}));
  EXPECT_EQ(sanitizer_argv("cs", "racecheck", "x"),
            (V{"cs", "--tool", "racecheck", "--target-processes", "all", "--error-exitcode", "86", "sh", "-c", "x"}));
  EXPECT_EQ(kSanitizerErrorExit, 86);
  EXPECT_THROW(sanitizer_argv("cs", "memcheck --leak-check full", "x"), std::invalid_argument);
}

}  // namespace
}  // namespace maxcode
