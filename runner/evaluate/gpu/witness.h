// The out-of-process witness of a GPU winner (docs/evaluation.md "Out-of-process
// witness"). The kernel time that decides a speedup comes from CUPTI inside the
// benchmark's own process, where candidate code can switch the recording off, rewrite
// its files or do the work in a child process started without the injection. Nsight
// Compute, started by maxcode around the benchmark, follows every child process and is
// out of the candidate's reach: before a speedup is reported, the winner and the
// original each run their kernel benchmarks once under it (ncu_duration_argv), and
// what it saw is held against CUPTI's records of the same version:
//   - the same number of kernel launches, and kernel time within the tolerance;
//   - the claimed speedup no more than (1 + tolerance) times ncu's.
// This file decides; the evaluator runs the programs (gpu_checks.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runner/core/witness_record.h"
#include "runner/evaluate/gpu/kernel_time.h"
#include "runner/evaluate/gpu/ncu.h"

namespace maxcode {

// Kernel launches and their summed duration in one run.
struct KernelWork {
  std::uint64_t launches = 0;
  double ns = 0;
};

// What ncu saw: every launch of every kernel in its log.
KernelWork ncu_work(const std::vector<NcuKernel>& kernels);
// What CUPTI recorded: every kernel, warm-up and uncounted ones included (the witness
// compares all work, not the timer's selection of it).
KernelWork cupti_work(const RunKernels& run);

// The original's own figures: empty when ncu and CUPTI agree on it; else why the
// witness cannot judge this target (then winners are reported as not witnessed,
// rather than every one rejected).
std::string check_original_witness(const WitnessSide& original, double tolerance);

// Judges a would-be winner. `claimed_speedup`: the A/B median of the kernel time the
// timer counts (0: not to be compared, where the claim also covers wall-time benchmarks); `counted_share`: the part of the original's kernel time
// (CUPTI, all kernels) that the timer counts, so that the claim can be stated over all
// kernel time as ncu measures it. The record's status is "agrees" or "rejected" (with
// the reason in `note`); every figure is filled in either way.
WitnessRecord judge_witness(const WitnessSide& original, const WitnessSide& candidate, double claimed_speedup,
                            double counted_share, double tolerance);

}  // namespace maxcode
