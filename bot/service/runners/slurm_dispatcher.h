// The Slurm backend: each queued job becomes one Slurm batch job that runs
// `maxcode runner --job ID --max-jobs 1` for it, so the job reaches its node through
// the runner protocol (runner_protocol.h) like any other, and everything after the
// claim (heartbeats, results, delivery) is the same as with pull runners.
//
// Slurm holds the mapping: the batch job of job ID's attempt N is named
// PREFIX-job-ID-N. Before it submits anything the dispatcher asks squeue what exists,
// so a service killed right after sbatch, and started again, finds its batch job there
// and submits none twice; the store holds nothing about Slurm. A batch job that ended
// without claiming its job (the runner could not start) counts as a failed attempt, with
// the tail of its output in the job's error. Output: each batch job writes to
// DATA_DIR/jobs/ID/slurm-attempt-N.out (or slurm.output_dir, as the nodes see it).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "bot/service/service_context.h"

namespace maxcode::bot::service {

class SlurmDispatcher {
 public:
  // `service_url`: the service's URL for runners when slurm.server_url and public_url
  // are empty (known once the socket is bound).
  SlurmDispatcher(ServiceContext& context, std::string runner_token, std::function<std::string()> service_url);

  // One pass: cancels batch jobs still pending for jobs that no longer wait, and submits
  // one for each queued job that has none (one per repository, its backoff passed).
  // Asks squeue only while jobs wait (or after a start or a failed scancel).
  void step();
  // `/maxcode cancel` of job `id`: its batch jobs that have not started are cancelled at
  // once (a started runner learns of the cancel from its next heartbeat, stops the job
  // and reports it cancelled).
  void cancel(std::int64_t id);

  // PREFIX-job-ID-ATTEMPT.
  std::string job_name(std::int64_t id, int attempt) const;
  // The batch output file of job `id`'s attempt, as the nodes see it.
  std::filesystem::path output_file(std::int64_t id, int attempt) const;
  // The options sbatch gets for `job`'s next attempt (name, output, time, partition, gres, extra).
  std::vector<std::string> sbatch_options(const Job& job) const;
  // The batch script: exec of `maxcode runner` for this job only, every word quoted.
  std::string batch_script(const Job& job) const;
  // What sbatch runs with and hands on to the batch job: the service's environment
  // without its webhook secret and admin token, with the runner token.
  std::vector<std::pair<std::string, std::string>> batch_environment() const;
  // The time limit in minutes: budget.wall_s + setup_s, else time_limit_s.
  long time_limit_minutes() const;

 private:
  void submit(const Job& job);
  ServiceContext& context_;
  std::string token_;
  std::function<std::string()> service_url_;
  std::mutex mutex_;  // step() and cancel() come from different threads
  // Batch jobs this process submitted, by name: one that leaves squeue while its job is
  // still queued at that attempt ended without claiming it.
  std::map<std::string, std::string> submitted_;
  // Batch jobs may be pending for jobs that no longer wait: after a start (the process
  // before may have died between a cancel and its scancel) and after a failed scancel.
  bool sweep_needed_ = true;
};

}  // namespace maxcode::bot::service
