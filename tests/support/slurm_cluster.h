// A one-node Slurm cluster for a test, started by scripts/slurm-local.sh in a directory
// of the test's (munged, slurmctld and slurmd on loopback) and stopped when it goes out
// of scope. SLURM_CONF is set in this process, so that sbatch, squeue and scancel, here
// and in the processes it starts (`maxcode serve`), talk to it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace maxcode::testing {

class SlurmCluster {
 public:
  // Empty when Slurm's daemons and clients and munge are installed; otherwise what is
  // missing (a test skips with it).
  static std::string missing();
  // Starts it with `gpus` generic `gpu` resources on its node; throws with the
  // daemons' logs when it does not come up.
  SlurmCluster(const std::filesystem::path& dir, int gpus);
  ~SlurmCluster();
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;

  // One line per job slurmctld knows, ended ones included (MinJobAge), in squeue's
  // --format (default "ID|NAME|STATE").
  std::vector<std::string> all_jobs(const std::string& format = "%i|%j|%T") const;
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

}  // namespace maxcode::testing
