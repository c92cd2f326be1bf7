// The nightly sweep's history at its seams: one target of one repository on one night
// (what `maxcode sweep` records in the history store and the trend page draws), and a
// regression the sweep found between two nights.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace maxcode {

struct NightResult {
  std::string night;        // "2026-11-21": the sweep's date, not the clock's
  std::string repository;   // as the job gave it, without credentials
  std::string target;       // the function
  std::string file;
  std::string commit;
  double share = 0;         // of the profiled time; 0 when unknown
  double self_ns = 0;       // the function's own time in the profile
  std::uint64_t samples = 0;  // profile samples behind self_ns
  double original_s = 0;    // median time of the original's benchmarks (A/A rounds)
  std::vector<double> original_rounds;
  std::optional<double> speedup, speedup_low, speedup_high;  // confirmed, with a winner
  std::string status;       // the target's verdict or status ("winner", "no winner", "failed", ...)
  int pr_number = 0;
  std::string pr_url;
  std::string pr_state;     // the delivery's outcome ("created", "updated", "dry-run", ...) or why none
  std::vector<std::string> commits_since;  // since the previous night's commit: "<sha> <subject>"
};

// A hot function whose own time grew significantly from one night to the next.
struct Regression {
  std::string repository, target, file;
  std::string previous_night, night;
  std::string previous_commit, commit;
  double growth = 1;      // own time, this night / previous night
  double z = 0;           // standard errors of the difference (profile sampling)
  double original_growth = 1;  // the original benchmarks' median time, likewise
  std::vector<std::string> commits;  // between the two nights' commits
};

nlohmann::json to_json(const NightResult& row);
nlohmann::json to_json(const Regression& regression);

}  // namespace maxcode
