// `maxcode runner`: takes jobs from the service (runner_protocol.h) and runs them.
//
// For each job: fetch the repository at the job's commit with the read-only token the
// service handed out (libgit2, the token never on a command line), write the job input
// document pointing at that checkout, run `RUN_COMMAND --job job.json --out DIR` in its
// own process group, heartbeating meanwhile (a cancel or a lost lease kills it), then
// upload DIR/job.json and each DIR/targets/<slug>/ (result.json, patch.diff, reports).
// The runner never holds the App's key, and the job's process never sees the runner's
// token (the CLI removes it from the environment after reading it).
//
// What the service hands over is read into a ClaimedJob first (claimed_job.h): a reply
// the runner cannot act on is reported as the job's failure, naming the field, and the
// runner goes on polling. The job ran candidates' code, so its output is read back
// beneath its directory (beneath.h): a link planted there is skipped with a note in the
// log, never followed. The job's processes run in a group of their own (a cgroup where
// the machine gives one) and none outlives the job.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace maxcode::bot::worker {

struct RunnerOptions {
  std::string server;  // http(s)://host:port of `maxcode serve`
  std::string token;   // the service's runner token
  std::string name;    // empty = hostname-pid
  std::vector<std::string> labels;
  std::string run_command;  // empty = this maxcode binary's `run`
  std::filesystem::path work_dir;  // empty = a directory under the system temp dir
  double wait_s = 25;       // long poll
  double heartbeat_s = 10;
  double job_timeout_s = 6 * 3600;
  int max_jobs = 0;         // stop after this many jobs (0 = never)
  // Claim this job only (0 = any): a runner that Slurm started for one job. It stops
  // when the service says the job is no longer waiting (cancelled, run elsewhere).
  std::int64_t job_id = 0;
  double idle_exit_s = 0;   // stop after this long without a job (0 = never)
};

// Runs until max_jobs or idle_exit_s says stop (or forever); returns the exit code.
int run_runner(const RunnerOptions& options);

}  // namespace maxcode::bot::worker
