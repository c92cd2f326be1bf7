// The benchmark audit at setup: what an ordinary benchmark can and cannot catch.
//
// Run on the original only. From the reference runs (one per MAXCODE_SEED) and the two
// check runs through the call shim ("observe": per-call records; "perturb": inputs
// changed and outputs poisoned between calls), it says whether the benchmark's output
// depends on the seed and on the input, whether it prints only a summary, whether it
// reuses the same input on every call, and whether it leaves the previous call's
// outputs in place. Its findings go into result.json ("audit"), the reports and the PR;
// for each weakness the evaluation's own check that covers it is named.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/core/benchmark_audit.h"
#include "runner/evaluate/call_records.h"
#include "runner/evaluate/output_compare.h"

namespace maxcode {

struct AuditInputs {
  std::string benchmark;
  bool compare_output = true;
  std::vector<std::string> references;         // stdout per seed
  std::optional<std::vector<CallRecord>> observed;   // the observe run's records
  std::optional<std::string> perturbed_output;  // stdout of the perturb run (seed 0)
  std::string interface = "none";
  bool outputs_sized = true;                   // some output has a known element count
  std::string shim_problem;                    // non-empty: no call check, and why
  double rtol = 1e-6, atol = 0;
  std::vector<VaryingField> varying;           // numbers not compared (timings the benchmark prints)
};

// AuditInputs::shim_problem for a benchmark timed by its kernels on which the call check
// could not be made (it keeps the GPU defences only).
inline constexpr const char* kTimedByKernels = "timed by its kernels";

BenchmarkAudit audit_benchmark(const AuditInputs& inputs);

}  // namespace maxcode
