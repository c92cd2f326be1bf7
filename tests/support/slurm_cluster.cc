#include "support/slurm_cluster.h"

#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "runner/util/process.h"
#include "support/test_support.h"

namespace maxcode::testing {

namespace fs = std::filesystem;

namespace {

Outcome sh(const std::string& shell, double timeout_s = 60) {
  Command c;
  c.shell = shell;
  c.timeout_s = timeout_s;
  c.limit_scope = LimitScope::kProcess;
  return run(c);
}

}  // namespace

std::string SlurmCluster::missing() {
  std::string out;
  for (const char* tool : {"munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "sinfo"})
    if (!sh(std::string("command -v ") + tool + " || test -x /usr/sbin/" + tool).ok()) out += std::string(out.empty() ? "" : ", ") + tool;
  if (!out.empty()) out = "Slurm is not installed (missing " + out + "; scripts/setup.sh installs Debian's slurm-wlm and munge)";
  return out;
}

SlurmCluster::SlurmCluster(const fs::path& dir, int gpus) : dir_(dir) {
  const std::string script = source_path("scripts/slurm-local.sh").string();
  const Outcome o = sh(shell_command({script, "start", dir.string(), std::to_string(gpus)}), 60);
  if (!o.ok()) {
    sh(shell_command({script, "stop", dir.string()}));
    throw std::runtime_error("scripts/slurm-local.sh start: " + o.describe() + "\n" + o.out + o.err);
  }
  setenv("SLURM_CONF", (dir / "slurm.conf").c_str(), 1);
}

SlurmCluster::~SlurmCluster() {
  sh(shell_command({source_path("scripts/slurm-local.sh").string(), "stop", dir_.string()}));
  unsetenv("SLURM_CONF");
}

std::vector<std::string> SlurmCluster::all_jobs(const std::string& format) const {
  const Outcome o = sh(shell_command({"squeue", "--states=all", "--noheader", "--format=" + format}));
  if (!o.ok()) throw std::runtime_error("squeue: " + o.describe() + ": " + o.tail());
  std::vector<std::string> lines;
  std::istringstream in(o.out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

}  // namespace maxcode::testing
