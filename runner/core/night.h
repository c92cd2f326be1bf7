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

// The same-night check of a suspected regression: the previous night's commit and this
// night's, built side by side and profiled in alternating rounds, so that both see the
// same machine load (runner/job/regression_check.h). Nights are hours apart, and a load
// that differs between them moves every time measured on them; a pair of runs a second
// apart shares it.
struct RegressionCheck {
  int rounds = 0;                    // pairs profiled
  std::vector<double> before_ns;     // the function's own time per round, previous commit
  std::vector<double> after_ns;      // likewise, this night's commit
  double growth = 0;                 // median over rounds of after_i / before_i
  double low = 0, high = 0;          // its 95% interval (util/stats.h)
  bool confirmed = false;            // every round slower (the rule also asks low >= 1 + min_growth)
  std::string note;                  // when no check could be made: why
};

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
  std::optional<RegressionCheck> check;  // made when the night-to-night rule flagged this night
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
  std::optional<RegressionCheck> check;  // the same-night check that confirmed it, if one was made
};

nlohmann::json to_json(const RegressionCheck& check);
// Reads what to_json wrote. Throws nlohmann::json::exception on a wrong shape.
RegressionCheck regression_check_from_json(const nlohmann::json& j);
nlohmann::json to_json(const NightResult& row);
nlohmann::json to_json(const Regression& regression);

// What a regression's growth rests on, for people: "2.0 standard errors of the
// profile's sampling", or "measured side by side: 1.80x [1.62, 1.95], slower in 5 of 5
// rounds".
std::string regression_evidence(const Regression& regression);

}  // namespace maxcode
