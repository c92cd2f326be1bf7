// The same-night check of a suspected regression. The history's night-to-night rule
// (runner/store/history.h) compares times measured hours apart; on a shared machine a
// busier night slows everything. So a flagged function is measured again, the same
// night, on both commits: each built once, then profiled in alternating pairs of runs
// (order flipped every round), and its own time compared pair by pair.
//
// Decision: the slowdown is confirmed when every pair's ratio after/before is above 1
// (a sign test: with 5 pairs, p = 1/32 = 0.031 that an unchanged function does so); the
// history's rule then also asks the median ratio to reach 1 + min_growth. The 95%
// interval of the median ratio (util/stats.h) is recorded for the report.
#pragma once

#include <filesystem>
#include <string>

#include "runner/core/config.h"
#include "runner/core/night.h"
#include "runner/util/progress.h"

namespace maxcode {

struct CheckedFunction {
  std::string function, file;  // as the profile names them
};

struct RegressionCheckRequest {
  std::filesystem::path repository;  // a clone holding both commits (a job's source/)
  std::string before_commit;         // the previous night's
  std::filesystem::path config;      // repository-relative, as the job read it
  std::vector<CheckedFunction> functions;  // all measured by the same profile runs
  int rounds = 5;
  std::filesystem::path work_dir;    // checkouts and builds go here (removed afterwards)
};

// One check per requested function, in order; each commit is built once and every
// profile run measures all the functions. Never throws for a build or profile that
// fails: a check then has rounds = 0 and a note saying why, and the night-to-night
// rule stands.
std::vector<RegressionCheck> check_regressions(const RegressionCheckRequest& request, Progress& progress);

// The decision alone, from paired own times (before_ns[i] and after_ns[i] measured
// back to back): fills rounds, growth, low, high, confirmed.
void decide_regression(RegressionCheck& check);

}  // namespace maxcode
