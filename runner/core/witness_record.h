// WitnessRecord: what the out-of-process witness (runner/evaluate/gpu/witness.h) saw of
// a GPU winner and its original — Nsight Compute's kernel launches and time per
// benchmark run next to the CUPTI records of the same version, the speedup ncu sees,
// and its verdict. Carried by the winner's Evaluation into result.json and report.md,
// so that a reader sees what the claim rests on besides the in-process timer.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "runner/core/witness_status.h"

namespace maxcode {

// One version's kernel work per run of its kernel benchmarks (all summed): every
// kernel of every process, warm-up included; and the part of it the timer counts.
struct WitnessSide {
  std::uint64_t ncu_launches = 0;
  double ncu_ns = 0;
  std::uint64_t cupti_launches = 0;
  double cupti_ns = 0;
  // The launches the timer counts (its kernels, past the warm-up): how many (CUPTI's),
  // and their kernel time by ncu and by CUPTI (the timer's own figure).
  std::uint64_t counted_launches = 0;
  double ncu_counted_ns = 0;
  double cupti_counted_ns = 0;
  // true: ncu's launches were matched to CUPTI's kernels (by name, else by order of
  // first launch, with the same launches per kernel), and `ncu_counted_ns` sums ncu's
  // own durations of the counted ones; false: they could not be, and it is `ncu_ns`
  // times the counted share of CUPTI's kernel time.
  bool per_launch = false;
  // ncu's kernel time over CUPTI's (1 = the same; 0 when CUPTI recorded none).
  double agreement() const { return cupti_ns > 0 ? ncu_ns / cupti_ns : 0; }
};

struct WitnessRecord {
  // kAgrees: the winner stands; kRejected: `note` is the reason; kNotWitnessed: ncu
  // could not judge (missing, failed on the original, or the original's own figures
  // disagree), and `note` says why. Nothing is claimed until it is judged.
  WitnessStatus status = WitnessStatus::kNotWitnessed;
  std::string note;
  double tolerance = 0.25;  // relative, from gpu.witness_tolerance
  WitnessSide original, candidate;
  double claimed_speedup = 0;   // the A/B median (kernel time the timer counts); 0: not compared
  // ncu over the launches the timer counts: the original's kernel time on them / the
  // candidate's; 0 = unknown. The claim is held against this figure.
  double witness_speedup = 0;
  double counted_share = 0;     // of the original's kernel time (ncu), the part on the counted launches
  double all_kernels_speedup = 0;  // ncu over all kernel time: the original's / the candidate's
  // The claim over all kernel time, were the launches the timer does not count as long
  // as the original's: 1 / (1 - share + share / claimed); held against
  // `all_kernels_speedup`, so that work moved into uncounted launches shows.
  double expected_speedup = 0;
};

// "witness: ncu 2.31x vs claimed 2.35x (agree within 25%)"; where the timer counts part
// of the kernel time: "witness: ncu 2.94x vs claimed 3.00x on the launches the timer
// counts (over all kernel time: ncu 1.49x, the claim 1.50x were the other launches
// unchanged) (agree within 25%)"; or
// "not witnessed: <note>" / "witness rejected: <note>".
std::string describe(const WitnessRecord& record);

nlohmann::json to_json(const WitnessRecord& record);
// Throws nlohmann::json::exception without a status, std::invalid_argument naming a
// status of no known name.
WitnessRecord witness_record_from_json(const nlohmann::json& j);

}  // namespace maxcode
