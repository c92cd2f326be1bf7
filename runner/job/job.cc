#include "runner/job/job.h"

#include <cstdio>

#include "runner/job/job_input.h"
#include "runner/job/target_search.h"
#include "runner/profile/benchmark_entries.h"
#include "runner/profile/select.h"
#include "runner/search/method.h"
#include "runner/store/rollout_store.h"

namespace maxcode {

namespace fs = std::filesystem;

namespace {

// The function to search: named (by the command line or targets.functions), with its
// definition and benchmark entries told by the profile where the name leaves them
// open; or named nowhere, the profile's hottest in scope (runner/profile/select.h).
void choose_function(TargetSearch& job, const JobOptions& o, const fs::path& config_file, Progress& progress) {
  job.function = o.function;
  job.signature = o.signature;
  job.file = o.file;
  if (job.function.empty() && job.config.targets.functions.empty()) {
    // Named nowhere: profile the benchmarks and take the hottest function, or the
    // launcher of the hottest kernel, in scope.
    const TargetChoice choice = choose_target_by_profile(o.repo, config_file, job.config, o.quiet);
    job.function = choice.function;
    if (job.signature.empty()) job.signature = choice.signature;
    job.file = choice.file;
    for (const std::string& note : time_driven_entries(job.config.benchmarks, choice.benchmark_entries))
      progress.note(note);
    return;
  }
  if (job.function.empty()) job.function = job.config.targets.functions.front();
  // Several definitions and no signature given: the profile says which one is hot.
  if (job.signature.empty() && job.config.targets.signature.empty())
    job.signature = signature_from_profile(o.repo, config_file, job.config, job.function, o.quiet);
  // A Google Benchmark program: timed on the entries the named function drives.
  for (const std::string& note : time_driven_entries(
           job.config.benchmarks, entries_from_profile(o.repo, config_file, job.config, job.function, o.quiet)))
    progress.note(note);
}

// The lines a person reads at the end; the exit status (1 on a fatal error).
int report_outcome(const TargetSearchOutcome& outcome, const JobOptions& o, bool optimize, Progress& progress) {
  const SearchResult& result = outcome.result;
  if (result.winner) {
    const auto& sp = result.winner->confirmed.speedup;
    char line[200];
    std::snprintf(line, sizeof line, "winner: %s — %.3fx faster (95%% CI %.3f-%.3f, %d rounds, confirmed)",
                  result.winner->id.c_str(), sp.median, sp.low, sp.high, sp.rounds);
    progress.note(line);
    if (const auto& w = result.winner->evaluation.witness) progress.note("  " + describe(*w));
  } else {
    progress.note("no winner" + (result.unconfirmed ? ": " + *result.unconfirmed : std::string()));
  }
  for (const auto& w : outcome.info.warnings) progress.note("warning: " + w);
  int status = 0;
  if (result.fatal) {
    progress.note(
        "maxcode: error: " + *result.fatal +
        (optimize ? " (results so far are written; fix it and run with --resume " + o.out.string() + ")" : ""));
    status = 1;
  }
  progress.note("wrote " + (o.out / "report.md").string() + ", report.html, result.json" +
                (outcome.patch.empty() ? "" : ", patch.diff") +
                (optimize ? ", trajectory.jsonl, checkpoint.json, rollouts.sqlite" : ""));
  return status;
}

// What `optimize` and `eval` share around search_target: config, the function, and
// the lines a person reads at the end. Exit codes as job.h says.
int run_command(const JobOptions& o, const std::optional<Checkpoint>& checkpoint) {
  Progress progress(stderr, o.quiet);
  const bool optimize = o.candidate_file.empty();
  try {
    TargetSearch job;
    job.repo = o.repo;
    const fs::path config_file = o.config.empty() ? o.repo / ".maxcode.json" : o.config;
    job.config = load_config(config_file);
    if (!o.policy.empty()) {
      const std::optional<SearchPolicy> policy = policy_named(o.policy);
      if (!policy) throw PolicyError("--policy: " + unknown_policy(o.policy));
      job.config.search.policy = *policy;
    }
    if (!o.replay_dir.empty()) keep_out_of_scope(job.config.scope, o.repo, fs::absolute(o.replay_dir));
    else if (!job.config.search.replay_dir.empty()) keep_out_of_scope(job.config.scope, "", job.config.search.replay_dir);
    // Before the profile that may choose the function, and before any build.
    if (optimize) check_policy_inputs(job.config, o.repo, o.replay_dir, o.env);
    choose_function(job, o, config_file, progress);
    if (o.max_evaluations > 0) job.config.search.max_evaluations = o.max_evaluations;
    job.out = o.out;
    job.replay_dir = o.replay_dir;
    job.db = o.db;
    job.candidate_file = o.candidate_file;
    job.resume = checkpoint;
    job.keep_workspaces = o.keep_workspaces;
    job.env = o.env;
    return report_outcome(search_target(job, progress), o, optimize, progress);
  } catch (const std::exception& e) {
    progress.note(std::string("maxcode: error: ") + e.what());
    return 1;
  }
}

}  // namespace

int run_optimize(const JobOptions& given) {
  JobOptions o = given;
  std::optional<Checkpoint> checkpoint;
  if (!o.resume.empty()) {
    try {
      checkpoint = read_checkpoint(o.resume);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "maxcode: error: %s\n", e.what());
      return 1;
    }
    // The interrupted run decides what is searched and where results go.
    o.out = o.resume;
    o.function = checkpoint->target.function;
    if (o.signature.empty()) o.signature = checkpoint->target.signature;  // an overload chosen before
    o.file = checkpoint->target.file;  // a definition of one name among several files
    o.policy = checkpoint->policy;
    // `--resume DIR` alone, as the README shows it: the interrupted run's repository,
    // config and replay directory, unless given again (issue 22: a resume from another
    // directory, or without --replay-dir, did not search what was interrupted).
    if (o.repo == "." && !checkpoint->repository.empty()) o.repo = checkpoint->repository;
    if (o.config.empty() && !checkpoint->config_file.empty()) o.config = checkpoint->config_file;
    if (o.replay_dir.empty() && !checkpoint->replay_dir.empty()) o.replay_dir = checkpoint->replay_dir;
  }
  return run_command(o, checkpoint);
}

int run_eval(const JobOptions& o) { return run_command(o, std::nullopt); }

int run_export(const fs::path& db, const fs::path& out) {
  try {
    ExportCounts counts = export_training_data(db, out);
    std::printf("wrote %d slow/fast pairs to %s, %d reward-to-go samples to %s, %d staged rewards to %s\n",
                counts.sft_pairs, (out / "sft.jsonl").c_str(), counts.rtg_samples, (out / "rtg.jsonl").c_str(),
                counts.staged_rewards, (out / "rewards.jsonl").c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "maxcode: error: %s\n", e.what());
    return 1;
  }
}

}  // namespace maxcode
