#include "bot/service/runners/slurm_commands.h"

#include <sstream>

#include "runner/util/process.h"

namespace maxcode::bot::service {

namespace {

// slurmctld answers in milliseconds; a minute means it is down or unreachable, and the
// dispatcher tries again on its next step.
constexpr double kToolTimeoutS = 60;

// `env` null: the service's own environment; else exactly *env.
Outcome run_tool(const std::vector<std::string>& argv, const std::string& stdin_data = "",
                 const std::vector<std::pair<std::string, std::string>>* env = nullptr) {
  Command c;
  c.shell = shell_command(argv);
  c.stdin_data = stdin_data;
  if (env) {
    c.env = *env;
    c.parent_env = ParentEnv::kDrop;
  }
  c.timeout_s = kToolTimeoutS;
  c.output_cap = 4u << 20;
  c.limit_scope = LimitScope::kProcess;  // a short client, not untrusted code
  const Outcome o = run(c);
  if (!o.ok()) {
    // 127: the shell did not find it.
    const std::string why = o.exit_code == 127 ? argv[0] + " not found (is Slurm's client installed, is it on PATH?)"
                                               : o.describe() + ": " + o.tail(1000);
    throw SlurmError(shell_command(argv) + ": " + why);
  }
  return o;
}

}  // namespace

std::vector<SlurmJob> slurm_jobs(const std::string& name_prefix) {
  // '|' cannot be part of the fields asked for (ids, our own names, state words).
  const Outcome o = run_tool({"squeue", "--noheader", "--format=%i|%j|%T"});
  std::vector<SlurmJob> jobs;
  std::istringstream in(o.out);
  for (std::string line; std::getline(in, line);) {
    const auto a = line.find('|'), b = line.rfind('|');
    if (a == std::string::npos || a == b) continue;
    SlurmJob j{line.substr(0, a), line.substr(a + 1, b - a - 1), line.substr(b + 1)};
    if (j.name.rfind(name_prefix, 0) == 0) jobs.push_back(std::move(j));
  }
  return jobs;
}

std::string slurm_submit(const std::vector<std::string>& options, const std::string& script,
                         const std::vector<std::pair<std::string, std::string>>& env) {
  std::vector<std::string> argv{"sbatch", "--parsable"};
  argv.insert(argv.end(), options.begin(), options.end());
  const Outcome o = run_tool(argv, script, &env);
  // --parsable: "ID" or "ID;CLUSTER".
  std::string id = o.out.substr(0, o.out.find_first_of(";\n"));
  if (id.empty() || id.find_first_not_of("0123456789_") != std::string::npos)
    throw SlurmError("sbatch answered '" + o.out.substr(0, 200) + "', not a job id");
  return id;
}

void slurm_cancel(const std::vector<std::string>& ids) {
  if (ids.empty()) return;
  std::vector<std::string> argv{"scancel"};
  argv.insert(argv.end(), ids.begin(), ids.end());
  run_tool(argv);
}

}  // namespace maxcode::bot::service
