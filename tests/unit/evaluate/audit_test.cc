#include "runner/evaluate/audit.h"

#include <gtest/gtest.h>

namespace maxcode {
namespace {

// Calls as an ordinary benchmark makes them: the same buffers, the same input, and the
// last call's output still in place.
std::vector<CallRecord> reused_calls(int n) {
  std::vector<CallRecord> calls;
  for (int i = 0; i < n; ++i) {
    CallRecord r;
    r.call = i;
    r.seconds = 1e-3;
    r.args.push_back({"in", true, "0x10", 16, "aaaa", "aaaa"});
    r.args.push_back({"out", false, "0x20", 16, i == 0 ? "0000" : "bbbb", "bbbb"});
    calls.push_back(r);
  }
  return calls;
}

bool has(const BenchmarkAudit& a, const std::string& text) {
  for (const auto& f : a.findings)
    if (f.find(text) != std::string::npos) return true;
  return false;
}

TEST(Audit, APlainBenchmarkIsCalledOut) {
  AuditInputs in;
  in.benchmark = "main";
  in.references = {"checksum 7.48e+06\n", "checksum 7.48e+06\n", "checksum 7.48e+06\n"};
  in.observed = reused_calls(40);
  in.perturbed_output = "checksum 1.25e+07\n";
  in.interface = "described";
  BenchmarkAudit a = audit_benchmark(in);
  EXPECT_EQ(a.seed_changes_output, false);
  EXPECT_EQ(a.input_changes_output, true);
  EXPECT_TRUE(a.summary_only);
  EXPECT_EQ(a.printed_numbers, 1u);
  EXPECT_EQ(a.inputs_reused, true);
  EXPECT_EQ(a.outputs_unpoisoned, true);
  EXPECT_EQ(a.calls, 40);
  EXPECT_TRUE(has(a, "same for every MAXCODE_SEED"));
  EXPECT_TRUE(has(a, "prints only a summary (1 number(s))"));
  EXPECT_TRUE(has(a, "same input, unchanged, on all 40 calls"));
  EXPECT_TRUE(has(a, "previous call's result"));
  EXPECT_NE(a.call_check.find("checked and timed alike"), std::string::npos) << a.call_check;
  EXPECT_NE(a.call_check.find("every call's outputs compared"), std::string::npos) << a.call_check;
  EXPECT_EQ(to_json(a)["inputs_reused"], true);
}

TEST(Audit, OutputThatIgnoresTheInputIsCalledOut) {
  AuditInputs in;
  in.benchmark = "main";
  in.references = {"done\n", "done\n", "done\n"};
  in.perturbed_output = "done\n";
  BenchmarkAudit a = audit_benchmark(in);
  EXPECT_EQ(a.input_changes_output, false);
  EXPECT_TRUE(has(a, "does not depend on the input")) << a.findings.size();
}

TEST(Audit, ACarefulBenchmarkHasNoWeakness) {
  AuditInputs in;
  in.benchmark = "main";
  std::string many;
  for (int i = 0; i < 100; ++i) many += std::to_string(i) + " ";
  in.references = {many + "1", many + "2", many + "3"};
  auto calls = reused_calls(4);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    calls[i].args[0].entry_hash = "in" + std::to_string(i);    // fresh input each call
    calls[i].args[1].entry_hash = "poison";                    // outputs poisoned
  }
  in.observed = calls;
  in.perturbed_output = many + "9";
  in.interface = "inferred";
  BenchmarkAudit a = audit_benchmark(in);
  EXPECT_EQ(a.inputs_reused, false);
  EXPECT_EQ(a.outputs_unpoisoned, false);
  EXPECT_FALSE(a.summary_only);
  ASSERT_EQ(a.findings.size(), 1u);
  EXPECT_EQ(a.findings[0], "its output changes with MAXCODE_SEED");
}

TEST(Audit, NoShimIsAWeaknessWithItsReason) {
  AuditInputs in;
  in.benchmark = "main";
  in.references = {"1", "2"};
  in.shim_problem = "'f' is a template";
  BenchmarkAudit a = audit_benchmark(in);
  EXPECT_TRUE(has(a, "cannot add its call check ('f' is a template)"));
  EXPECT_EQ(a.call_check, "none: 'f' is a template");
}

// A Google Benchmark program prints times: with no call check, only the tests are left.
TEST(Audit, WithoutComparedOutputTheTestsAreNamedAsTheOnlyGuard) {
  AuditInputs in;
  in.benchmark = "main";
  in.compare_output = false;
  in.references = {"", ""};
  in.shim_problem = "a Google Benchmark program calls the target for as many iterations as fill its time";
  BenchmarkAudit a = audit_benchmark(in);
  EXPECT_TRUE(has(a, "its output is not compared, so only the tests guard against skipped work"));
  EXPECT_FALSE(has(a, "only the benchmark's own output guards"));
}

TEST(Audit, WithoutASizedOutputTheCheckSaysWhatItLacks) {
  AuditInputs in;
  in.benchmark = "main";
  in.references = {"1", "2"};
  in.interface = "inferred";
  in.outputs_sized = false;
  const BenchmarkAudit a = audit_benchmark(in);
  EXPECT_NE(a.call_check.find("no output of the target could be sized"), std::string::npos) << a.call_check;
  EXPECT_EQ(a.call_check.find("every call's outputs compared"), std::string::npos) << a.call_check;
}

TEST(Audit, AKernelTimedBenchmarkNamesTheGpuCheck) {
  AuditInputs in;
  in.benchmark = "main";
  in.references = {"1", "2"};
  in.shim_problem = kTimedByKernels;
  BenchmarkAudit a = audit_benchmark(in);
  EXPECT_NE(a.call_check.find("per-launch consistency"), std::string::npos) << a.call_check;
  EXPECT_TRUE(has(a, "not poisoned nor its inputs perturbed"));
}

}  // namespace
}  // namespace maxcode
