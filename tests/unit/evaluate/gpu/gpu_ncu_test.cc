// Nsight Compute: the real CSV log of two saxpy launches on an H100, synthetic logs for
// what it lacks (stalls, several kernels, missing and unknown metrics), broken CSV, and
// the command line.
#include <gtest/gtest.h>

#include <algorithm>

#include "runner/evaluate/gpu/ncu.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

using testing::read_file;
using testing::source_path;

const char* kHeader =
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\","
    "\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";

// One row of the synthetic logs, shaped like ncu's.
std::string row(int id, const std::string& kernel, const std::string& metric, const std::string& value) {
  return "\"" + std::to_string(id) + "\",\"7\",\"bench\",\"127.0.0.1\",\"" + kernel +
         "\",\"1\",\"7\",\"(256, 1, 1)\",\"(64, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"" + metric +
         "\",\"\",\"" + value + "\"\n";
}

std::string error_of(const std::string& log) {
  try {
    parse_ncu_csv(log);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Ncu, ReadsRealSaxpyLog) {
  // ncu 2025.3 --clock-control none -k regex:'^(saxpy)$' --launch-skip 1 --launch-count 2
  // --csv --print-units base on H100: saxpy over 2^24 floats.
  auto ks = parse_ncu_csv(read_file(source_path("tests/fixtures/gpu/ncu_saxpy.csv")));
  ASSERT_EQ(ks.size(), 1u);
  const NcuKernel& k = ks[0];
  EXPECT_EQ(k.name, "saxpy(int, float, const float *, float *)");
  EXPECT_EQ(k.launches, 2);
  EXPECT_DOUBLE_EQ(k.duration_ns, (70016.0 + 70752.0) / 2);
  EXPECT_DOUBLE_EQ(k.dram_bytes, (134223872.0 + 51286784.0 + 134225920.0 + 51374848.0) / 2);
  EXPECT_DOUBLE_EQ(k.flops, 2 * 16777216.0);
  EXPECT_DOUBLE_EQ(k.fp64_flops, 0);
  EXPECT_NEAR(k.dram_throughput_pct, (79.07 + 78.31) / 2, 1e-9);
  EXPECT_NEAR(k.sm_throughput_pct, (28.73 + 28.46) / 2, 1e-9);
  EXPECT_NEAR(k.achieved_occupancy_pct, (76.24 + 76.15) / 2, 1e-9);
  EXPECT_DOUBLE_EQ(k.theoretical_occupancy_pct, 100);
  EXPECT_EQ(k.occupancy_limiter, "warps");  // 8 blocks, below registers 16, smem 32, blocks 32
  EXPECT_TRUE(k.stalls.empty());            // not asked for in that run
  EXPECT_EQ(k.registers, 16);
  const double dram_hz = (2618007312.61 + 2616915422.89) / 2, sm_hz = (1978326598.94 + 1977539343.57) / 2;
  EXPECT_NEAR(k.peak_bytes_per_s, 1280 * dram_hz, 1);
  EXPECT_NEAR(k.peak_bytes_per_s, 3.35e12, 0.01e12);
  EXPECT_NEAR(k.peak_flops_per_s, 2 * 16896 * sm_hz, 1);  // ~66.9 TFLOP/s fp32
  EXPECT_NEAR(k.peak_fp64_flops_per_s, 2 * 8448 * sm_hz, 1);
  // Memory-bound: the floor is the bytes at peak bandwidth, ~55.4 us of 70.4 us.
  EXPECT_NEAR(k.floor_ns, 1e9 * k.dram_bytes / k.peak_bytes_per_s, 1e-6);
  EXPECT_NEAR(k.floor_ns, 55384, 5);
  EXPECT_NEAR(k.roofline_pct, 100 * k.floor_ns / k.duration_ns, 1e-9);
  EXPECT_NEAR(k.roofline_pct, 78.7, 0.05);
  EXPECT_EQ(describe_ncu(k),
            "70.4 us; DRAM 79% / SM 29% of peak; occupancy 76% achieved of 100% (limit: warps); 186 MB moved; "
            "79% of roofline");
  auto j = to_json(k);
  EXPECT_EQ(j["name"], k.name);
  EXPECT_EQ(j["launches"], 2);
  EXPECT_EQ(j["occupancy_limiter"], "warps");
  EXPECT_TRUE(j["stalls"].is_array());
}

TEST(Ncu, TwoKernelsStallsFp64AndUnknownMetrics) {
  const std::string stall = "smsp__average_warps_issue_stalled_";
  std::string log = "==PROF== Connected to process 7 (/w/bench)\r\n" + std::string(kHeader);
  for (int id : {0, 1}) {
    const std::string a = "reduce<256>(const double *, double *, int)";
    log += row(id, a, "gpu__time_duration.sum", id ? "3,000" : "1,000");
    log += row(id, a, stall + "long_scoreboard_per_issue_active.ratio", "12.5");
    log += row(id, a, stall + "barrier_per_issue_active.ratio", "3.25");
    log += row(id, a, stall + "wait_per_issue_active.ratio", "1.5");
    log += row(id, a, stall + "math_pipe_throttle_per_issue_active.ratio", "0.5");
    log += row(id, a, stall + "sleeping_per_issue_active.ratio", "0");
    log += row(id, a, stall + "selected_per_issue_active.ratio", "99");  // issuing: not a stall
    log += row(id, a, "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum", "1,000,000");
    log += row(id, a, "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum", "500,000");
    log += row(id, a, "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", "1,000,000");
    log += row(id, a, "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained", "1,000");
    log += row(id, a, "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained", "2,000");
    log += row(id, a, "sm__cycles_elapsed.avg.per_second", "1,000,000,000");
    log += row(id, a, "launch__occupancy_limit_registers", "4");
    log += row(id, a, "launch__occupancy_limit_shared_mem", "4");  // tie: registers come first
    log += row(id, a, "launch__occupancy_limit_warps", "8");
    log += row(id, a, "some__future_metric.sum", "5");
    log += row(id, "copy(float *)", "gpu__time_duration.sum", "500");
    log += row(id, "copy(float *)", "dram__bytes_read.sum", "n/a");
  }
  auto ks = parse_ncu_csv(log);
  ASSERT_EQ(ks.size(), 2u);
  const NcuKernel& r = ks[0];
  EXPECT_EQ(r.name, "reduce<256>(const double *, double *, int)");
  EXPECT_EQ(r.launches, 2);
  EXPECT_DOUBLE_EQ(r.duration_ns, 2000);
  ASSERT_EQ(r.stalls.size(), 3u);
  EXPECT_EQ(r.stalls[0], (std::pair<std::string, double>{"long_scoreboard", 12.5}));
  EXPECT_EQ(r.stalls[1].first, "barrier");
  EXPECT_EQ(r.stalls[2].first, "wait");
  EXPECT_EQ(r.occupancy_limiter, "registers");
  EXPECT_DOUBLE_EQ(r.fp64_flops, 2e6);
  EXPECT_DOUBLE_EQ(r.flops, 3e6);
  EXPECT_DOUBLE_EQ(r.peak_flops_per_s, 4e12);
  EXPECT_DOUBLE_EQ(r.peak_fp64_flops_per_s, 2e12);
  // No DRAM numbers: compute only, fp32 and fp64 times added: 1e6/4e12 + 2e6/2e12 s.
  EXPECT_DOUBLE_EQ(r.peak_bytes_per_s, 0);
  EXPECT_NEAR(r.floor_ns, 250 + 1000, 1e-6);
  EXPECT_NEAR(r.roofline_pct, 62.5, 1e-9);
  EXPECT_EQ(describe_ncu(r), "2.00 us; stalls: long_scoreboard 12.5, barrier 3.2, wait 1.5; 62% of roofline");

  const NcuKernel& c = ks[1];
  EXPECT_EQ(c.name, "copy(float *)");
  EXPECT_EQ(c.launches, 2);
  EXPECT_DOUBLE_EQ(c.duration_ns, 500);
  EXPECT_DOUBLE_EQ(c.dram_bytes, 0);
  EXPECT_EQ(c.occupancy_limiter, "");
  EXPECT_DOUBLE_EQ(c.floor_ns, 0);
  EXPECT_DOUBLE_EQ(c.roofline_pct, 0);
  EXPECT_EQ(describe_ncu(c), "500 ns");
}

TEST(Ncu, EmptyAndProfilerOnlyLogs) {
  EXPECT_TRUE(parse_ncu_csv("").empty());
  EXPECT_TRUE(parse_ncu_csv("==PROF== Connected to process 1\n==WARNING== No kernels were profiled.\n").empty());
  EXPECT_TRUE(parse_ncu_csv(kHeader).empty());
}

TEST(Ncu, MalformedCsvNamesTheLine) {
  const std::string head = "==PROF== Connected to process 7\n" + std::string(kHeader);
  EXPECT_EQ(error_of(head + row(0, "k()", "gpu__time_duration.sum", "1") + "\"0\",\"7\",\"unterminated\n"),
            "ncu CSV line 4: unterminated quoted field");
  EXPECT_EQ(error_of(head + "\"0\",\"7\"\n"), "ncu CSV line 3: 2 fields, the header has 15");
  EXPECT_EQ(error_of(head + "\"0\"x,\"7\"\n"), "ncu CSV line 3: text after a closing quote");
  EXPECT_EQ(error_of("\"Kernel Name\",\"Metric Value\"\n"), "ncu CSV line 1: the header has no \"ID\" column");
}

TEST(Ncu, CsvRecordSplitter) {
  using V = std::vector<std::string>;
  EXPECT_EQ(split_csv_record(""), V{""});
  EXPECT_EQ(split_csv_record("a,b,,c"), (V{"a", "b", "", "c"}));
  EXPECT_EQ(split_csv_record("\"saxpy(int, float, const float *, float *)\",\"16,777,216\""),
            (V{"saxpy(int, float, const float *, float *)", "16,777,216"}));
  EXPECT_EQ(split_csv_record("\"say \"\"hi\"\"\",x,\"\""), (V{"say \"hi\"", "x", ""}));
  EXPECT_EQ(split_csv_record("a,"), (V{"a", ""}));
  EXPECT_EQ(split_csv_record("\"a\","), (V{"a", ""}));
  EXPECT_THROW(split_csv_record("\"a"), std::runtime_error);
  EXPECT_THROW(split_csv_record("\"a\"\""), std::runtime_error);
  EXPECT_THROW(split_csv_record("a\"b"), std::runtime_error);
}

TEST(Ncu, RooflineFloor) {
  EXPECT_DOUBLE_EQ(roofline_floor_s(1e9, 1e9, 1e12, 1e13), 1e-3);
  EXPECT_DOUBLE_EQ(roofline_floor_s(1e9, 1e12, 1e12, 1e13), 0.1);
  EXPECT_DOUBLE_EQ(roofline_floor_s(1e9, 1e12, 0, 1e13), 0.1);
  EXPECT_DOUBLE_EQ(roofline_floor_s(1e9, 1e12, 1e12, 0), 1e-3);
  EXPECT_DOUBLE_EQ(roofline_floor_s(1e9, 1e12, 0, 0), 0);
}

TEST(Ncu, CommandLine) {
  auto argv = ncu_argv("/opt/ncu", {"saxpy", "reduce.v2"}, 1, 4, "/tmp/ncu.csv", "./bench --n 10");
  auto at = [&](const std::string& option) {
    auto it = std::find(argv.begin(), argv.end(), option);
    return it == argv.end() || it + 1 == argv.end() ? std::string("(missing)") : *(it + 1);
  };
  EXPECT_EQ(argv.front(), "/opt/ncu");
  EXPECT_EQ(at("--clock-control"), "none");  // never change the GPU's clocks
  EXPECT_EQ(at("--target-processes"), "all");
  EXPECT_EQ(at("--kernel-name-base"), "function");
  EXPECT_EQ(at("-k"), "regex:(^|[^A-Za-z0-9_])(saxpy|reduce\\.v2)([^A-Za-z0-9_]|$)");
  EXPECT_EQ(at("--launch-skip"), "1");
  EXPECT_EQ(at("--launch-count"), "4");
  EXPECT_EQ(at("--print-units"), "base");
  EXPECT_EQ(at("--log-file"), "/tmp/ncu.csv");
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--csv"), argv.end());
  ASSERT_GE(argv.size(), 3u);
  EXPECT_EQ((std::vector<std::string>(argv.end() - 3, argv.end())),
            (std::vector<std::string>{"sh", "-c", "./bench --n 10"}));
  std::string metrics = at("--metrics");
  auto wanted = ncu_metrics();
  EXPECT_EQ(wanted.size(), 23u + 17u);
  EXPECT_EQ(std::count(metrics.begin(), metrics.end(), ','), static_cast<long>(wanted.size()) - 1);
  for (const auto& m : wanted) EXPECT_NE(metrics.find(m), std::string::npos) << m;
  EXPECT_NE(metrics.find("smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"),
            std::string::npos);
  EXPECT_EQ(metrics.find("stalled_selected_"), std::string::npos);
  for (const auto& a : argv) EXPECT_EQ(a.find("clock-control base"), std::string::npos);

  EXPECT_EQ(ncu_argv("ncu", {"a+b", "x(y)", "[z]^$|*?{}\\"}, 0, 1, "f", "c")[8],
            "regex:(^|[^A-Za-z0-9_])(a\\+b|x\\(y\\)|\\[z\\]\\^\\$\\|\\*\\?\\{\\}\\\\)([^A-Za-z0-9_]|$)");
  auto all = ncu_argv("ncu", {}, 0, 0, "f", "c");
  EXPECT_EQ(std::find(all.begin(), all.end(), "-k"), all.end());
  EXPECT_EQ(std::find(all.begin(), all.end(), "--launch-count"), all.end());
}

TEST(Ncu, DurationArgvProfilesEveryKernelOfEveryProcessWithOneMetric) {
  EXPECT_EQ(ncu_duration_argv("/usr/local/cuda/bin/ncu", "/w/log.csv", "./bench --n 10"),
            (std::vector<std::string>{"/usr/local/cuda/bin/ncu", "--clock-control", "none", "--cache-control",
                                      "none", "--target-processes",
                                      "all", "--kernel-name-base", "function", "--metrics", "gpu__time_duration.sum",
                                      "--csv", "--print-units", "base", "--log-file", "/w/log.csv", "sh", "-c",
                                      "./bench --n 10"}));
}

TEST(Ncu, KeepsTheTotalDurationBesideTheMean) {
  auto ks = parse_ncu_csv(read_file(source_path("tests/fixtures/gpu/ncu_saxpy.csv")));
  ASSERT_EQ(ks.size(), 1u);
  EXPECT_DOUBLE_EQ(ks[0].total_duration_ns, 70016.0 + 70752.0);
}

}  // namespace
}  // namespace maxcode
