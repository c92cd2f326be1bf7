#include "runner/core/witness_record.h"

#include <cmath>
#include <cstdio>

namespace maxcode {
namespace {

std::string figure(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

nlohmann::json side_json(const WitnessSide& s) {
  return {{"ncu_launches", s.ncu_launches},
          {"ncu_ns", s.ncu_ns},
          {"cupti_launches", s.cupti_launches},
          {"cupti_ns", s.cupti_ns},
          {"agreement", s.agreement()},
          {"counted_launches", s.counted_launches},
          {"ncu_counted_ns", s.ncu_counted_ns},
          {"cupti_counted_ns", s.cupti_counted_ns},
          {"per_launch", s.per_launch}};
}

WitnessSide side_from_json(const nlohmann::json& j) {
  WitnessSide s;
  s.ncu_launches = j.value("ncu_launches", std::uint64_t{0});
  s.ncu_ns = j.value("ncu_ns", 0.0);
  s.cupti_launches = j.value("cupti_launches", std::uint64_t{0});
  s.cupti_ns = j.value("cupti_ns", 0.0);
  s.counted_launches = j.value("counted_launches", std::uint64_t{0});
  s.ncu_counted_ns = j.value("ncu_counted_ns", 0.0);
  s.cupti_counted_ns = j.value("cupti_counted_ns", 0.0);
  s.per_launch = j.value("per_launch", false);
  return s;
}

}  // namespace

std::string describe(const WitnessRecord& r) {
  if (r.status == WitnessStatus::kNotWitnessed) return "not witnessed: " + r.note;
  if (r.status == WitnessStatus::kRejected) return "witness rejected: " + r.note;
  std::string text = "witness: ncu " + figure("%.2fx", r.witness_speedup);
  if (r.claimed_speedup <= 0) return text + " (speedups not compared: the claim also covers benchmarks timed by "
                                            "wall clock) (agree within " + figure("%.0f%%", 100 * r.tolerance) + ")";
  text += " vs claimed " + figure("%.2fx", r.claimed_speedup);
  // A share of 0 is unknown (a record of an older maxcode); 1: the timer counts all.
  if (r.counted_share > 0 && r.counted_share < 0.995) {
    text += " on the launches the timer counts (over all kernel time: ncu " + figure("%.2fx", r.all_kernels_speedup) +
            ", the claim " + figure("%.2fx", r.expected_speedup) + " were the other launches unchanged)";
    if (!r.original.per_launch || !r.candidate.per_launch)
      text += " (ncu's launches not matched to the timer's: its time split in CUPTI's proportions)";
  }
  return text + " (agree within " + figure("%.0f%%", 100 * r.tolerance) + ")";
}

nlohmann::json to_json(const WitnessRecord& r) {
  nlohmann::json j = {{"status", witness_status_name(r.status)}, {"tolerance", r.tolerance},
                      {"original", side_json(r.original)},       {"candidate", side_json(r.candidate)},
                      {"claimed_speedup", r.claimed_speedup},    {"witness_speedup", r.witness_speedup},
                      {"counted_share", r.counted_share},        {"all_kernels_speedup", r.all_kernels_speedup},
                      {"expected_speedup", r.expected_speedup}};
  if (!r.note.empty()) j["note"] = r.note;
  return j;
}

WitnessRecord witness_record_from_json(const nlohmann::json& j) {
  WitnessRecord r;
  r.status = witness_status_from_name(j.at("status").get<std::string>());
  r.note = j.value("note", "");
  r.tolerance = j.value("tolerance", 0.25);
  if (j.contains("original")) r.original = side_from_json(j["original"]);
  if (j.contains("candidate")) r.candidate = side_from_json(j["candidate"]);
  r.claimed_speedup = j.value("claimed_speedup", 0.0);
  r.counted_share = j.value("counted_share", 0.0);
  r.expected_speedup = j.value("expected_speedup", 0.0);
  r.witness_speedup = j.value("witness_speedup", 0.0);
  r.all_kernels_speedup = j.value("all_kernels_speedup", 0.0);
  return r;
}

}  // namespace maxcode
