// The out-of-process witness of a GPU winner (docs/evaluation.md "Out-of-process
// witness"). The kernel time that decides a speedup comes from CUPTI inside the
// benchmark's own process, where candidate code can switch the recording off, rewrite
// its files or do the work in a child process started without the injection. Nsight
// Compute, started by maxcode around the benchmark, follows every child process and is
// out of the candidate's reach: before a speedup is reported, the winner and the
// original each run their kernel benchmarks once under it (ncu_duration_argv), and
// what it saw is held against CUPTI's records of the same version:
//   - the same number of kernel launches, and kernel time within the tolerance;
//   - the claimed speedup no more than (1 + tolerance) times ncu's over the same
//     launches: those the timer counts (its kernels, past the warm-up), found in ncu's
//     log launch by launch, on both sides;
//   - the claim stated over all kernel time, were the launches the timer does not count
//     as long as the original's, no more than (1 + tolerance) times ncu's speedup over
//     all kernel time (work moved into launches the timer does not count).
// This file decides; the evaluator runs the programs (witness_check.cc).
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

// One version's side of the witness for one kernel benchmark: ncu's log of a run of it
// (`ncu`) beside CUPTI's records of its last run in the A/B session (`run`), read with
// the timer's `selection`. The launches the timer counts are found in ncu's log kernel
// by kernel: ncu's kernels are matched to CUPTI's by demangled name, white space ignored
// (ncu prints "float *", the demangler "float*"), or else by order of first launch, each
// pair with the same number of launches; of each counted kernel, as many of ncu's first
// launches are left out as the timer left out as warm-up, and the rest summed. Where no
// such match exists, ncu's kernel time is split in the proportions of CUPTI's
// (`per_launch` false).
WitnessSide witness_side(const std::vector<NcuKernel>& ncu, const RunKernels& run, const KernelSelection& selection);
// The sides of several benchmarks summed (per run of them all); `per_launch` where every
// one was.
WitnessSide sum_sides(const std::vector<WitnessSide>& sides);

// The original's own figures: empty when ncu and CUPTI agree on it; else why the
// witness cannot judge this target (then winners are reported as not witnessed,
// rather than every one rejected).
std::string check_original_witness(const WitnessSide& original, double tolerance);

// Judges a would-be winner. `claimed_speedup`: the A/B median of the kernel time the
// timer counts (0: not to be compared, where the claim also covers wall-time
// benchmarks). It is held against ncu's speedup over the launches the timer counts (the
// same launches on both sides), and, stated over all kernel time with the uncounted
// launches as long as the original's, against ncu's speedup over all kernel time. The
// record's status is "agrees" or "rejected" (with the reason in `note`); every figure is
// filled in either way.
WitnessRecord judge_witness(const WitnessSide& original, const WitnessSide& candidate, double claimed_speedup,
                            double tolerance);

}  // namespace maxcode
