// `maxcode run` as a function: clone the repository at the ref, read its project file,
// profile it, pick the top units by share of time (or the ones the input names), split
// the budget across them, search each (search_target), hand each winner to delivery,
// and keep DIR/job.json and DIR/report.html current all along. It prints progress
// lines and nothing else; it reads no environment variable (credentials come in
// JobRun) and returns data: the record, whose exit_code the CLI returns.
//
// Output directory (docs/job.md):
//   DIR/job.json             the record (job_record.h), rewritten after every change
//   DIR/report.html          all targets, their plots, the profile
//   DIR/profile.json         the profile the targets were chosen from
//   DIR/source/              the clone
//   DIR/targets/<slug>/      one result directory per target: result.json, patch.diff,
//                            report.*, trajectory.jsonl, checkpoint.json, rollouts.sqlite
//                            (+ pr-branch.txt, pr-title.txt, pr-body.md for a dry run)
#pragma once

#include <atomic>
#include <filesystem>
#include <string>

#include "runner/core/environment.h"
#include "runner/job/delivery.h"
#include "runner/job/job_input.h"
#include "runner/job/job_record.h"
#include "runner/util/progress.h"

namespace maxcode {

// Exit codes of `maxcode run` (docs/job.md). 2, a usage error, belongs to the CLI.
inline constexpr int kJobCompleted = 0;      // every target searched; winners delivered
inline constexpr int kJobFailed = 1;         // nothing searched: clone, config, profile, scope, budget
inline constexpr int kJobUsage = 2;          // bad command line or input document
inline constexpr int kJobStopped = 3;        // SIGTERM: partial results written; --resume continues
inline constexpr int kJobPartlyFailed = 4;   // completed, but a target or a delivery failed

struct JobRun {
  JobInput input;
  std::filesystem::path out;
  bool resume = false;                 // `out` holds the job.json of an interrupted job
  std::string git_token;               // HTTPS password for the clone; empty: none
  std::filesystem::path ssh_key;       // ssh private key; empty: the ssh-agent
  Delivery* delivery = nullptr;        // required unless input.delivery.mode is "none"
  const std::atomic<bool>* stop = nullptr;  // set (SIGTERM): stop at the next step
  bool keep_workspaces = false;
  Environment env;                     // read by the CLI: GPUs, lock and cache folders
};

JobRecord run_job(const JobRun& run, Progress& progress);

}  // namespace maxcode
