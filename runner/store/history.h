// The sweep's history store (SQLite, WAL): per repository, target and night, the
// original's time, the function's own time in the profile, the best confirmed speedup,
// the PR and its state, and the commits since the night before. `maxcode sweep` adds a
// night; `maxcode sweep --report` reads them all for the trend page.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "runner/core/night.h"

struct sqlite3;

namespace maxcode {

class HistoryStore {
 public:
  // Opens or creates the file. Throws std::runtime_error naming it.
  explicit HistoryStore(const std::filesystem::path& file);
  ~HistoryStore();
  HistoryStore(const HistoryStore&) = delete;
  HistoryStore& operator=(const HistoryStore&) = delete;

  // One row per (night, repository, target): a night recorded again replaces its row.
  void record(const NightResult& row);
  // All rows, by repository, target, night.
  std::vector<NightResult> all() const;
  // The latest night before `night` on which `repository` was swept; empty if none.
  std::string previous_commit(const std::string& repository, const std::string& night) const;

 private:
  std::filesystem::path file_;
  sqlite3* db_ = nullptr;
};

// When a function's own time counts as having grown: by at least `min_growth` (0.10 is
// 10%), and beyond the noise: by at least `min_z` standard errors of the profile's
// sampling (a sampled time of s samples has a relative error of about 1/sqrt(s)), or
// with every timed round of the original on the later night slower than every round on
// the earlier one (a short benchmark gives few samples, but a dozen A/B rounds). Where
// the profile has no sample counts, the rounds alone decide.
//
// That comparison is only a screen: the two nights ran hours apart, and a machine that
// is busier on one of them slows everything measured on it (on a shared 2-core runner,
// by 1.3x or more). A sweep therefore measures each target on both commits the same
// night (runner/job/regression_check.h): where a row carries that check, the check
// decides (every paired round slower, and the 95% interval of the growth at or above
// 1 + min_growth, not only its median).
struct RegressionRule {
  double min_growth = 0.10;
  double min_z = 3;
};

// Consecutive nights of each (repository, target), compared (rows as all() gives them).
std::vector<Regression> find_regressions(const std::vector<NightResult>& rows, const RegressionRule& rule = {});

}  // namespace maxcode
