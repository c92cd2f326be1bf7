// `maxcode sweep SWEEP.json`: the nightly performance sweep. Many jobs (repositories,
// or several targets of one), one after another within a total budget; every target's
// night goes into the history store (runner/store/history.h), and the trend page with
// its regression flags is drawn from that store.
//
// SWEEP.json (docs/job.md "Sweep"):
//   {"history": "history.sqlite",   path relative to SWEEP.json's folder (default)
//    "out": "sweep-out",            each night's jobs go to OUT/<night>/<n>-<slug>/
//    "night": "2026-11-21",         optional: the night's date (default: today, UTC)
//    "budget": {...},               the whole sweep's budget, split across the jobs
//    "min_growth": 0.10,            regression rule (history.h)
//    "min_z": 3,                    likewise
//    "same_night_check": true,      targets timed on both commits side by side (regression_check.h)
//    "jobs": [<job input>, ...]}    job-input.schema.json documents each
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runner/job/job_input.h"
#include "runner/job/run_job.h"
#include "runner/store/history.h"

namespace maxcode {

struct SweepInput {
  std::filesystem::path history;
  std::filesystem::path out;
  std::string night;
  Budget budget;
  RegressionRule rule;
  bool same_night_check = true;  // each job measures its targets on last night's commit too
  std::vector<JobInput> jobs;
};

// Strict, like the job input; relative paths are resolved against the file's folder.
SweepInput load_sweep_input(const std::filesystem::path& file);

struct SweepJob {
  std::string repository;
  std::filesystem::path out;
  JobRecord record;
};

// `maxcode sweep`'s exit code when every job completed and the night flagged a
// regression (the job codes, run_job.h, are 0 to 4).
inline constexpr int kSweepRegression = 5;

struct SweepResult {
  std::string night;
  std::vector<SweepJob> jobs;
  std::vector<Regression> regressions;  // this night's, against the night before
  std::filesystem::path trend_page;
  int exit_code = 0;  // the worst of the jobs' (run_job.h), 3 when stopped, else 5 for a regression
};

struct SweepRun {
  SweepInput input;
  std::string git_token;
  std::filesystem::path ssh_key;
  // One Delivery per job (its input names where its PRs go); may return null for "none".
  std::function<std::unique_ptr<Delivery>(const JobInput&)> make_delivery;
  const std::atomic<bool>* stop = nullptr;
};

// Runs the night: each job (a job of this night that was interrupted is resumed),
// records it in the history, then writes OUT/trend.html.
SweepResult run_sweep(const SweepRun& run, Progress& progress);

// `maxcode sweep --report`: the trend page from the history alone; returns the
// regressions it flags.
std::vector<Regression> write_trend_page(const std::filesystem::path& history, const std::filesystem::path& page,
                                         const RegressionRule& rule = {});

// One target's row of the history for `night` (the service records its scheduled jobs'
// targets with it too). `commits`: since the night before, "<sha> <subject>".
NightResult night_row(const std::string& night, const JobRecord& job, const TargetRecord& t,
                      const std::vector<std::string>& commits);

// Today's date in UTC, "YYYY-MM-DD".
std::string utc_date();

}  // namespace maxcode
