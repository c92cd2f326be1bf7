#include "bot/service/runners/slurm_dispatcher.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "bot/service/runners/slurm_commands.h"
#include "runner/util/child_env.h"
#include "runner/util/files.h"
#include "runner/util/process.h"

namespace maxcode::bot::service {

namespace {

namespace fs = std::filesystem;

// A runner whose job cannot be claimed this long (the service down, the job held back)
// ends its batch job rather than hold an allocation; the dispatcher submits again.
constexpr int kRunnerIdleExitS = 300;

// "ID-ATTEMPT" after the prefix -> the job's id; 0 when the name is not one of ours.
std::int64_t id_in_name(const std::string& name, const std::string& prefix, int* attempt) {
  if (name.rfind(prefix, 0) != 0) return 0;
  const std::string rest = name.substr(prefix.size());
  const auto dash = rest.find('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 == rest.size() ||
      rest.find_first_not_of("0123456789-") != std::string::npos)
    return 0;
  try {
    *attempt = std::stoi(rest.substr(dash + 1));
    return std::stoll(rest.substr(0, dash));
  } catch (const std::exception&) {
    return 0;
  }
}

std::string tail_of_file(const fs::path& file, std::size_t bytes) {
  const auto text = try_read_text(file);
  if (!text) return "(no output file " + file.string() + ")";
  return text->size() > bytes ? "..." + text->substr(text->size() - bytes) : *text;
}

}  // namespace

SlurmDispatcher::SlurmDispatcher(ServiceContext& context, std::string runner_token, std::function<std::string()> service_url)
    : context_(context), token_(std::move(runner_token)), service_url_(std::move(service_url)) {}

std::string SlurmDispatcher::job_name(std::int64_t id, int attempt) const {
  return context_.config.slurm.job_name_prefix + "-job-" + std::to_string(id) + "-" + std::to_string(attempt);
}

fs::path SlurmDispatcher::output_file(std::int64_t id, int attempt) const {
  const std::string file = "slurm-attempt-" + std::to_string(attempt) + ".out";
  const fs::path& dir = context_.config.slurm.output_dir;
  if (dir.empty()) return context_.data_dir / "jobs" / std::to_string(id) / file;
  return dir / ("job-" + std::to_string(id) + "-" + file);
}

long SlurmDispatcher::time_limit_minutes() const {
  const SlurmConfig& s = context_.config.slurm;
  const auto& budget = context_.config.budget;
  double seconds = s.time_limit_s;
  if (budget.contains("wall_s") && budget["wall_s"].is_number()) seconds = budget["wall_s"].get<double>() + s.setup_s;
  return std::max(1L, static_cast<long>(std::ceil(seconds / 60)));
}

std::vector<std::string> SlurmDispatcher::sbatch_options(const Job& job) const {
  const SlurmConfig& s = context_.config.slurm;
  const int attempt = job.attempts + 1;
  std::vector<std::string> o{"--job-name=" + job_name(job.id, attempt), "--output=" + output_file(job.id, attempt).string(),
                             "--time=" + std::to_string(time_limit_minutes())};
  if (!s.partition.empty()) o.push_back("--partition=" + s.partition);
  if (s.gpus > 0) o.push_back("--gres=gpu:" + std::to_string(s.gpus));
  o.insert(o.end(), s.sbatch_args.begin(), s.sbatch_args.end());
  return o;
}

std::string SlurmDispatcher::batch_script(const Job& job) const {
  const SlurmConfig& s = context_.config.slurm;
  std::string binary = s.maxcode;
  if (binary.empty()) {
    std::error_code ec;
    binary = fs::read_symlink("/proc/self/exe", ec).string();
    if (binary.empty()) binary = "maxcode";
  }
  const std::string url = !s.server_url.empty() ? s.server_url
                          : !context_.config.public_url.empty() ? context_.config.public_url
                                                                : service_url_();
  const int attempt = job.attempts + 1;
  std::string labels;
  for (const std::string& l : job.labels) labels += (labels.empty() ? "" : ",") + l;
  std::vector<std::string> argv{binary, "runner", "--server", url, "--token-env", context_.config.runner_token_env,
                                "--job", std::to_string(job.id), "--max-jobs", "1",
                                "--idle-exit", std::to_string(kRunnerIdleExitS), "--name", job_name(job.id, attempt)};
  if (!labels.empty()) argv.insert(argv.end(), {"--labels", labels});
  argv.insert(argv.end(), s.runner_args.begin(), s.runner_args.end());
  return "#!/bin/sh\n# maxcode job " + std::to_string(job.id) + " (" + job.repo + "), attempt " + std::to_string(attempt) +
         ", submitted by maxcode serve.\nexec " + shell_command(argv) + "\n";
}

std::vector<std::pair<std::string, std::string>> SlurmDispatcher::batch_environment() const {
  // sbatch passes its environment on to the job: the service's own (SLURM_CONF, PATH, the
  // site's settings) without the service's secrets, and the runner token, which travels
  // there and never on a command line that `ps` or squeue shows.
  const ServiceConfig& c = context_.config;
  std::vector<std::pair<std::string, std::string>> env;
  for (auto& [name, value] : process_environment())
    if (name != c.webhook_secret_env && name != c.admin_token_env && name != c.runner_token_env) env.emplace_back(name, value);
  env.emplace_back(c.runner_token_env, token_);
  return env;
}

void SlurmDispatcher::submit(const Job& job) {
  const int attempt = job.attempts + 1;
  const std::string name = job_name(job.id, attempt);
  const fs::path out = output_file(job.id, attempt);
  std::error_code ec;
  fs::create_directories(out.parent_path(), ec);  // Slurm does not make it; elsewhere on a node it may exist only there
  try {
    const std::string slurm_id = slurm_submit(sbatch_options(job), batch_script(job), batch_environment());
    submitted_[name] = slurm_id;
    context_.log("slurm", "job " + std::to_string(job.id) + " attempt " + std::to_string(attempt) + ": Slurm job " + slurm_id +
                              " (" + name + ", output " + out.string() + ")");
  } catch (const SlurmError& e) {
    context_.log("slurm", "job " + std::to_string(job.id) + ": " + e.what());
    if (context_.queue.fail_unstarted(job.id, std::string("Slurm did not take the job: ") + e.what()) && context_.report)
      context_.report(job.id);
  }
}

void SlurmDispatcher::step() {
  std::lock_guard lock(mutex_);
  std::vector<Job> queued = context_.queue.jobs("", {JobState::kQueued}, 1000);
  // Nothing waits and nothing is left to clean up: slurmctld is not asked.
  if (queued.empty() && !sweep_needed_) return;
  const std::string prefix = context_.config.slurm.job_name_prefix + "-job-";
  std::set<std::string> listed;
  std::vector<std::string> stale;
  for (const SlurmJob& sj : slurm_jobs(prefix)) {
    listed.insert(sj.name);
    int attempt = 0;
    const std::int64_t id = id_in_name(sj.name, prefix, &attempt);
    if (!id || sj.state != "PENDING") continue;
    const auto job = context_.queue.job(id);
    // It would only start a runner that finds nothing to do.
    if (!job || (job->state != JobState::kQueued && job->state != JobState::kRunning)) stale.push_back(sj.id);
  }
  if (!stale.empty()) {
    slurm_cancel(stale);
    context_.log("slurm", "cancelled " + std::to_string(stale.size()) + " pending batch job(s) of jobs no longer waiting");
  }
  sweep_needed_ = false;

  // Read again after the listing: a job queued at an attempt whose batch job is not
  // listed now had none, or one that ended without claiming it (a claim moves it on).
  queued = context_.queue.jobs("", {JobState::kQueued}, 1000);
  std::set<std::string> busy;  // one job per repository runs at a time: submit no second one
  for (const Job& j : context_.queue.jobs("", {JobState::kRunning}, 1000)) busy.insert(j.repo);
  std::reverse(queued.begin(), queued.end());  // oldest first, as runners claim
  for (const Job& j : queued) {
    if (j.not_before > context_.queue.now() || busy.count(j.repo)) continue;
    busy.insert(j.repo);
    const std::string name = job_name(j.id, j.attempts + 1);
    if (listed.count(name)) continue;  // submitted already (perhaps by the process before this one)
    if (const auto it = submitted_.find(name); it != submitted_.end()) {
      // Ours, gone from squeue, its job not claimed: the runner never got to it.
      const std::string tail = tail_of_file(output_file(j.id, j.attempts + 1), 1500);
      context_.log("slurm", "job " + std::to_string(j.id) + ": Slurm job " + it->second + " ended without claiming it");
      submitted_.erase(it);
      if (context_.queue.fail_unstarted(j.id, "Slurm job " + name + " ended without running the job; its output:\n" + tail) &&
          context_.report)
        context_.report(j.id);
      continue;
    }
    submit(j);
  }
}

void SlurmDispatcher::cancel(std::int64_t id) {
  std::lock_guard lock(mutex_);
  std::vector<std::string> pending;
  try {
    for (const SlurmJob& sj : slurm_jobs(context_.config.slurm.job_name_prefix + "-job-" + std::to_string(id) + "-"))
      if (sj.state == "PENDING") pending.push_back(sj.id);
    slurm_cancel(pending);
  } catch (const SlurmError&) {
    sweep_needed_ = true;  // the next step() cancels it
    throw;
  }
  if (!pending.empty())
    context_.log("slurm", "job " + std::to_string(id) + ": cancelled its pending batch job(s) " + pending.front() +
                              (pending.size() > 1 ? " and more" : ""));
}

}  // namespace maxcode::bot::service
