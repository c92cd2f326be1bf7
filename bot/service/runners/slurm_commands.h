// Slurm's command-line tools as the Slurm backend uses them: sbatch, squeue, scancel.
// Each runs through runner/util/process.h from an argument vector (every word quoted),
// with the environment of the service (SLURM_CONF and the like pick the cluster); a
// tool that fails or is missing is a SlurmError naming the command and what it said.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runner/util/error.h"

namespace maxcode::bot::service {

class SlurmError : public Error {
 public:
  using Error::Error;
};

struct SlurmJob {
  std::string id;     // Slurm's job id
  std::string name;   // --job-name
  std::string state;  // PENDING, RUNNING, COMPLETING, ...
};

// Jobs Slurm holds that have not ended (squeue's default states) whose name starts
// with `name_prefix`.
std::vector<SlurmJob> slurm_jobs(const std::string& name_prefix);

// Submits `script` (sbatch reads it from standard input) with `options`; sbatch runs
// with exactly `env`, which it passes on to the job (its default --export=ALL). Returns
// Slurm's job id.
std::string slurm_submit(const std::vector<std::string>& options, const std::string& script,
                         const std::vector<std::pair<std::string, std::string>>& env);

// Cancels the jobs with these Slurm ids (nothing when empty).
void slurm_cancel(const std::vector<std::string>& ids);

}  // namespace maxcode::bot::service
