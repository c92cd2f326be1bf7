// The `-Xptxas -v` report: a real CUDA 13 build log, the older cmem/no-barrier form,
// noise from other tools between the lines, spills, device functions, and garbage.
#include <gtest/gtest.h>

#include "runner/evaluate/gpu/ptxas_report.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

using testing::read_file;
using testing::source_path;

TEST(PtxasReport, ReadsRealSm90Report) {
  // nvcc 13 -arch=sm_90 -Xptxas -v on the probe program (four kernels).
  auto ks = parse_ptxas_report(read_file(source_path("tests/fixtures/gpu/ptxas_sm90.txt")));
  ASSERT_EQ(ks.size(), 4u);
  EXPECT_EQ(ks[0].kernel, "_Z4spinPVi");
  EXPECT_EQ(ks[0].arch, "sm_90");
  EXPECT_EQ(ks[0].registers, 6);
  EXPECT_EQ(ks[1].kernel, "_Z3oobPfi");
  EXPECT_EQ(ks[1].registers, 10);
  EXPECT_EQ(ks[2].kernel, "_Z4racyPf");
  EXPECT_EQ(ks[2].registers, 12);
  EXPECT_EQ(ks[2].barriers, 0);
  EXPECT_EQ(ks[2].shared_bytes, 1024);
  EXPECT_EQ(ks[2].stack_bytes, 0);
  EXPECT_EQ(ks[3].kernel, "_Z5saxpyifPKfPf");
  EXPECT_EQ(ks[3].shared_bytes, 0);
  EXPECT_EQ(describe_resources({ks[2]}), "_Z4racyPf (sm_90): 12 registers, 1024 B shared, no spills");
}

TEST(PtxasReport, OlderCmemFormWithoutBarriers) {
  const std::string text =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function '_Z6kernelPf' for 'sm_70'\n"
      "ptxas info    : Function properties for _Z6kernelPf\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 24 registers, 4224 bytes smem, 380 bytes cmem[0], 8 bytes cmem[2]\n"
      "ptxas info    : Compiling entry function '_Z4syncv' for 'sm_70'\n"
      "ptxas info    : Function properties for _Z4syncv\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 1 barriers, 8 registers, 352 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function '_Z3oldv' for 'sm_20'\n"
      "ptxas info    : Used 4 registers, 16+16 bytes smem, 4 bytes cmem[1]\n";
  auto ks = parse_ptxas_report(text);
  ASSERT_EQ(ks.size(), 3u);
  EXPECT_EQ(ks[0].registers, 24);
  EXPECT_EQ(ks[0].barriers, 0);
  EXPECT_EQ(ks[0].shared_bytes, 4224);
  EXPECT_EQ(ks[1].registers, 8);
  EXPECT_EQ(ks[1].barriers, 1);
  EXPECT_EQ(ks[2].registers, 4);
  EXPECT_EQ(ks[2].shared_bytes, 32);
}

TEST(PtxasReport, SpillsStackAndDeviceFunctions) {
  const std::string text =
      // A non-inlined device function: properties but no entry line, not a kernel.
      "ptxas info    : Function properties for _Z6helperf\n"
      "    16 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : Compiling entry function '_Z9transposePfPKf' for 'sm_80'\n"
      "ptxas info    : Function properties for _Z9transposePfPKf\n"
      "    48 bytes stack frame, 48 bytes spill stores, 52 bytes spill loads\n"
      "ptxas info    : Function properties for _Z6helperf\n"
      "    16 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 4224 bytes smem, 400 bytes cmem[0]\n";
  auto ks = parse_ptxas_report(text);
  ASSERT_EQ(ks.size(), 1u);
  EXPECT_EQ(ks[0].kernel, "_Z9transposePfPKf");
  EXPECT_EQ(ks[0].arch, "sm_80");
  EXPECT_EQ(ks[0].stack_bytes, 48);
  EXPECT_EQ(ks[0].spill_store_bytes, 48);
  EXPECT_EQ(ks[0].spill_load_bytes, 52);
  // The callee's properties come between, but the Used line is the kernel's.
  EXPECT_EQ(ks[0].registers, 255);
  EXPECT_EQ(ks[0].barriers, 1);
  EXPECT_EQ(ks[0].shared_bytes, 4224);
  auto pretty = [](const std::string& m) { return m == "_Z9transposePfPKf" ? "transpose" : m; };
  EXPECT_EQ(describe_resources(ks, pretty),
            "transpose (sm_80): 255 registers, 4224 B shared, 48 B stack, 52 B spilled (stores 48 B, "
            "loads 52 B)");
  auto j = to_json(ks[0]);
  EXPECT_EQ(j["kernel"], "_Z9transposePfPKf");
  EXPECT_EQ(j["spill_load_bytes"], 52);
}

TEST(PtxasReport, InterleavedBuildOutputSeveralFilesAndArchitectures) {
  const std::string text =
      "[1/3] /usr/local/cuda/bin/nvcc -gencode arch=compute_80,code=sm_80 -gencode "
      "arch=compute_90,code=sm_90 -Xptxas -v -c a.cu -o a.o\r\n"
      "ptxas info    : 0 bytes gmem\r\n"
      "ptxas info    : Compiling entry function '_Z1aPf' for 'sm_80'\r\n"
      "ptxas info    : Function properties for _Z1aPf\r\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\r\n"
      "ptxas info    : Used 16 registers, used 0 barriers, 364 bytes cmem[0]\r\n"
      "a.cu(12): warning #177-D: variable \"unused\" was declared but never referenced\r\n"
      "ptxas info    : Compiling entry function '_Z1aPf' for 'sm_90'\r\n"
      "ptxas info    : Function properties for _Z1aPf\r\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\r\n"
      "ptxas info    : Used 18 registers, used 0 barriers\r\n"
      "[2/3] /usr/local/cuda/bin/nvcc ... -c b.cu -o b.o\n"
      "ptxas info    : Compiling entry function '_Z1bv' for 'sm_90'\n"
      "ptxas info    : Used 7 registers\n"
      "[3/3] rebuild of a.cu in another step\n"
      "ptxas info    : Compiling entry function '_Z1aPf' for 'sm_80'\n"
      "ptxas info    : Function properties for _Z1aPf\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 20 registers, used 0 barriers\n";
  auto ks = parse_ptxas_report(text);
  ASSERT_EQ(ks.size(), 3u);
  EXPECT_EQ(ks[0].kernel, "_Z1aPf");
  EXPECT_EQ(ks[0].arch, "sm_80");
  EXPECT_EQ(ks[0].registers, 20);  // the last report of (kernel, arch) wins, in its first place
  EXPECT_EQ(ks[1].arch, "sm_90");
  EXPECT_EQ(ks[1].registers, 18);
  EXPECT_EQ(ks[2].kernel, "_Z1bv");
  EXPECT_EQ(ks[2].registers, 7);
  EXPECT_EQ(describe_resources(ks),
            "_Z1aPf (sm_80): 20 registers, no spills\n"
            "_Z1aPf (sm_90): 18 registers, no spills\n"
            "_Z1bv (sm_90): 7 registers, no spills");
}

TEST(PtxasReport, GarbageGivesNothing) {
  EXPECT_TRUE(parse_ptxas_report("").empty());
  EXPECT_TRUE(parse_ptxas_report("error: something\nptxas info\nptxas info    : Compiling entry function\n"
                                 "ptxas info    : Compiling entry function '\nptxas info :: Used x registers\n"
                                 "    bytes stack frame, , ,\n99999999999999999999999 bytes stack frame\n")
                  .empty());
  std::string binary(4096, '\0');
  for (std::size_t i = 0; i < binary.size(); ++i) binary[i] = static_cast<char>(i * 37);
  EXPECT_TRUE(parse_ptxas_report(binary).empty());
  EXPECT_EQ(describe_resources({}), "");
  // An entry line without its report still names a kernel; numbers stay 0.
  auto ks = parse_ptxas_report("ptxas info    : Compiling entry function '_Z1kv' for 'sm_90'\n"
                               "ptxas info    : Used 99999999999999999999 registers\n");
  ASSERT_EQ(ks.size(), 1u);
  EXPECT_EQ(ks[0].registers, 0);
}

}  // namespace
}  // namespace maxcode
