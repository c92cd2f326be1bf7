// WitnessRecord: what the out-of-process witness (runner/evaluate/gpu/witness.h) saw of
// a GPU winner and its original — Nsight Compute's kernel launches and time per
// benchmark run next to the CUPTI records of the same version, the speedup ncu sees,
// and its verdict. Carried by the winner's Evaluation into result.json and report.md,
// so that a reader sees what the claim rests on besides the in-process timer.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace maxcode {

// One version's kernel work per run of its kernel benchmarks (all summed): every
// kernel of every process, warm-up included.
struct WitnessSide {
  std::uint64_t ncu_launches = 0;
  double ncu_ns = 0;
  std::uint64_t cupti_launches = 0;
  double cupti_ns = 0;
  // ncu's kernel time over CUPTI's (1 = the same; 0 when CUPTI recorded none).
  double agreement() const { return cupti_ns > 0 ? ncu_ns / cupti_ns : 0; }
};

struct WitnessRecord {
  // "agrees": the winner stands; "rejected": `note` is the reason; "not witnessed": ncu
  // could not judge (missing, failed on the original, or the original's own figures
  // disagree), and `note` says why.
  std::string status;
  std::string note;
  double tolerance = 0.25;  // relative, from gpu.witness_tolerance
  WitnessSide original, candidate;
  double claimed_speedup = 0;   // the A/B median (kernel time the timer counts); 0: not compared
  double counted_share = 0;     // of the original's kernel time (CUPTI), the part the timer counts
  double expected_speedup = 0;  // the claim over all kernel time: 1 / (1 - share + share / claimed)
  double witness_speedup = 0;   // ncu: original's kernel time / the candidate's; 0 = unknown
};

// "witness: ncu 2.31x vs claimed 2.35x (agree within 25%)"; for a claim over a part of
// the kernel time: "... vs claimed 2.35x (2.10x over all kernel time) ..."; or
// "not witnessed: <note>" / "witness rejected: <note>".
std::string describe(const WitnessRecord& record);

nlohmann::json to_json(const WitnessRecord& record);
WitnessRecord witness_record_from_json(const nlohmann::json& j);

}  // namespace maxcode
