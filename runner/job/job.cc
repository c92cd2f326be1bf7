#include "runner/job/job.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "runner/evaluate/environment.h"
#include "runner/util/files.h"
#include "runner/util/secrets.h"
#include "runner/core/candidate_env.h"
#include "runner/workspace/locate.h"
#include "runner/workspace/patch.h"
#include "runner/profile/select.h"
#include "runner/report/report.h"
#include "runner/search/search.h"
#include "runner/search/checkpoint.h"
#include "runner/search/method.h"
#include "runner/store/rollout_store.h"
#include <random>

namespace maxcode {

namespace fs = std::filesystem;

namespace {

// Everything a run sets up before the first candidate.
struct Session {
  Config config;
  fs::path work_dir;
  SourceSnapshot source;
  Located located;
  std::vector<Knob> knobs;
  RunInfo info;
};

fs::path cache_dir() {
  if (const char* explicit_dir = std::getenv("MAXCODE_CACHE_DIR")) return explicit_dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME")) return fs::path(xdg) / "maxcode";
  if (const char* home = std::getenv("HOME")) return fs::path(home) / ".cache" / "maxcode";
  return fs::temp_directory_path() / "maxcode-cache";
}

bool have_ccache() {
  Command probe;
  probe.shell = "command -v ccache";
  probe.timeout_s = 5;
  return run(probe).ok();
}

std::vector<Knob> collect_knobs(const Session& s) {
  const std::string& file = s.located.target.file;
  std::vector<Knob> knobs = find_declared_knobs(read_text(s.source.root / file), file);
  for (const KnobConfig& kc : s.config.search.knobs) {
    const std::string knob_file = kc.file.empty() ? file : kc.file;
    Knob knob = locate_knob(read_text(s.source.root / knob_file), knob_file, kc);
    auto same = std::find_if(knobs.begin(), knobs.end(), [&](const Knob& k) { return k.name == knob.name; });
    if (same != knobs.end()) *same = knob;  // the config wins over the comment
    else knobs.push_back(knob);
  }
  return knobs;
}

void setup(Session& s, const JobOptions& o, const std::string& command) {
  const fs::path config_file = o.config.empty() ? o.repo / ".maxcode.json" : o.config;
  s.config = load_config(config_file);
  // The config may name key variables that do not look secret by name (api_key_env).
  add_secret_variables(secret_variable_names(s.config));
  std::string function = o.function;
  if (function.empty()) {
    // Named nowhere: profile the benchmarks and take the hottest function in scope
    // (runner/profile/select.h).
    function = s.config.targets.functions.empty()
                   ? choose_target_by_profile(o.repo, config_file, s.config, o.quiet)
                   : s.config.targets.functions.front();
  }
  s.work_dir = make_unique_dir(fs::temp_directory_path(), "maxcode-run-");
  s.source = capture_source(o.repo, s.work_dir / "source", s.config.workspace.exclude);
  s.located = locate_target(s.source.root, s.config.scope, function,
                            o.signature.empty() ? s.config.targets.signature : o.signature);
  s.knobs = collect_knobs(s);

  s.info.command = command;
  s.info.repository = s.source.repo.string();
  s.info.commit = s.source.commit;
  s.info.local_changes = s.source.local_changes;
  s.info.target = s.located.target;
  s.info.started_at = utc_now();
  const AcceptanceConfig& a = s.config.acceptance;
  s.info.settings = {{"min_speedup", a.min_speedup}, {"seeds", a.seeds},
                     {"warmup_rounds", a.warmup_rounds}, {"min_rounds", a.min_rounds},
                     {"max_rounds", a.max_rounds}, {"max_timing_s", a.max_timing_s},
                     {"target_relative_width", a.target_relative_width}};
}

std::string make_patch(const Session& s, const SearchResult& result) {
  if (!result.winner) return "";
  std::string patch;
  for (const auto& [path, content] : result.winner->files)
    patch += unified_diff(s.source.git_prefix + path, read_text(s.source.root / path), content);
  return patch;
}

// Shared by optimize and eval: sets up, measures the baseline, runs `body`, writes.
template <typename Body>
int run_job(const JobOptions& o, const std::string& command, Body body) {
  const auto start = std::chrono::steady_clock::now();
  Progress progress(stderr, o.quiet);
  Session s;
  int status = 0;
  try {
    setup(s, o, command);
    fs::path ccache;
    if (have_ccache()) {
      ccache = cache_dir() / "ccache";
      fs::create_directories(ccache);
    }
    Evaluator evaluator(s.config, s.source, s.located.target, s.located.extent, s.knobs,
                        {s.work_dir, ccache, o.keep_workspaces}, progress);
    s.info.environment = describe_environment(evaluator.isolation());
    progress.note("maxcode " + command + ": " + s.located.target.function + " in " +
                  s.located.target.file + ":" + std::to_string(s.located.target.line_begin));
    evaluator.prepare_baseline();
    for (const BenchmarkAudit& audit : evaluator.audits()) s.info.audit.push_back(to_json(audit));
    if (!evaluator.baseline_ncu().empty()) {
      nlohmann::json kernels = nlohmann::json::array();
      for (const NcuKernel& k : evaluator.baseline_ncu()) {
        kernels.push_back(to_json(k));
        progress.note("original, ncu: " + describe_ncu(k));
      }
      s.info.gpu["baseline_ncu"] = kernels;
    }
    Timing noise = evaluator.measure_noise();
    s.info.noise = noise;
    char line[200];
    std::snprintf(line, sizeof line, "A/A noise: %.3fx [%.3f, %.3f] over %d rounds; noise floor %.3f",
                  noise.speedup.median, noise.speedup.low, noise.speedup.high, noise.speedup.rounds,
                  noise.noise_floor);
    progress.note(line);

    fs::create_directories(o.out);
    SearchResult result = body(s, evaluator, progress);
    s.info.warnings = evaluator.warnings();
    s.info.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string patch = make_patch(s, result);
    write_outputs(o.out, s.info, result, patch);
    if (result.winner) {
      const auto& sp = result.winner->confirmed.speedup;
      std::snprintf(line, sizeof line, "winner: %s — %.3fx faster (95%% CI %.3f-%.3f, %d rounds, confirmed)",
                    result.winner->id.c_str(), sp.median, sp.low, sp.high, sp.rounds);
      progress.note(line);
    } else {
      progress.note("no winner" + (result.unconfirmed ? ": " + *result.unconfirmed : std::string()));
    }
    for (const auto& w : s.info.warnings) progress.note("warning: " + w);
    if (result.fatal) {
      progress.note("maxcode: error: " + *result.fatal +
                    (command == "optimize" ? " (results so far are written; fix it and run with --resume " +
                                                 o.out.string() + ")"
                                           : ""));
      status = 1;
    }
    progress.note("wrote " + (o.out / "report.md").string() + ", report.html, result.json" +
                  (patch.empty() ? "" : ", patch.diff") +
                  (command == "optimize" ? ", trajectory.jsonl, checkpoint.json, rollouts.sqlite" : ""));
  } catch (const std::exception& e) {
    progress.note(std::string("maxcode: error: ") + e.what());
    if (!s.work_dir.empty() && !o.keep_workspaces) remove_workspace(s.work_dir);
    return 1;
  }
  if (!o.keep_workspaces) remove_workspace(s.work_dir);
  else progress.note("workspaces kept in " + s.work_dir.string());
  return status;
}

}  // namespace

// "20261122T130501Z-3f9a1c": sortable, unique enough to key the rollout store.
std::string new_run_id() {
  std::string id = utc_now();
  id.erase(std::remove_if(id.begin(), id.end(), [](char c) { return c == '-' || c == ':'; }), id.end());
  char suffix[8];
  std::snprintf(suffix, sizeof suffix, "%06x", static_cast<unsigned>(std::random_device{}() & 0xffffff));
  return id + "-" + suffix;
}

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
    o.policy = checkpoint->policy;
  }
  int status = run_job(o, "optimize", [&](Session& s, Evaluator& evaluator, Progress& progress) {
    if (!o.policy.empty()) s.config.search.policy = o.policy;
    if (o.max_evaluations > 0) s.config.search.max_evaluations = o.max_evaluations;
    const SearchConfig& sc = s.config.search;
    s.info.policy = sc.policy;
    Spend spend;
    if (checkpoint) spend.restore(checkpoint->spend);
    const std::string file_text = read_text(s.source.root / s.located.target.file);
    auto method = make_method(
        {s.config, o.repo, o.replay_dir,
         make_target_context(s.located.target, file_text, evaluator.baseline_definition()), s.knobs},
        spend);

    // Everything a run learns is kept as it happens: trajectory.jsonl, the rollout
    // store, and a checkpoint after every step.
    const std::string run_id = checkpoint ? checkpoint->run_id : new_run_id();
    RolloutStore store(o.db.empty() ? o.out / "rollouts.sqlite" : o.db);
    store.begin_run({run_id, s.info.started_at, s.info.repository, s.info.commit, s.located.target,
                     method->context.language, sc.policy, evaluator.baseline_definition(), method->prompts.system});
    const fs::path trajectory_file = o.out / "trajectory.jsonl";
    if (!checkpoint) write_text(trajectory_file, "");
    std::ofstream trajectory(trajectory_file, std::ios::app);
    int seq = checkpoint ? static_cast<int>(checkpoint->state.trajectory.size()) : 0;
    double best_so_far = 1.0;
    if (checkpoint)
      for (const auto& e : checkpoint->state.trajectory) best_so_far = std::max(best_so_far, e.evaluation.reward());

    SearchHooks hooks;
    hooks.critic = method->critic.get();
    hooks.reranker = method->reranker.get();
    hooks.spend = &spend;
    hooks.on_entry = [&](const TrajectoryEntry& entry) {
      trajectory << redact_secrets(trajectory_line(entry).dump()) << "\n";
      trajectory.flush();
      store.add_candidate(run_id, seq++, entry, best_so_far);
      best_so_far = std::max(best_so_far, entry.evaluation.reward());
    };
    hooks.on_step = [&](const SearchState& state) {
      write_checkpoint(o.out, {run_id, sc.policy, s.located.target, state, spend.to_json()});
    };
    SearchLimits limits{sc.max_evaluations, sc.batch, sc.proposals > 0 ? sc.proposals : sc.batch,
                        sc.max_wall_s, sc.max_tokens, sc.max_dollars};
    SearchResult result = run_search(evaluator, *method->policy, s.located.target, limits, progress, hooks,
                                     checkpoint ? &checkpoint->state : nullptr);
    store.finish_run(run_id, result.winner ? std::optional<std::string>(result.winner->id) : std::nullopt,
                     result.winner ? to_json(result.winner->confirmed.speedup) : nlohmann::json(nullptr));
    return result;
  });
  return status;
}

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

int run_eval(const JobOptions& o) {
  return run_job(o, "eval", [&](Session& s, Evaluator& evaluator, Progress& progress) {
    s.info.policy = "single candidate";
    Candidate candidate = read_candidate_file(o.candidate_file, "cli");
    SearchResult result;
    const auto start = std::chrono::steady_clock::now();
    Checked checked = evaluator.check(evaluator.materialize(candidate));
    evaluator.time(checked);
    progress.note("  " + candidate.id + ": " + verdict_name(checked.evaluation.verdict) + " — " +
                  checked.evaluation.reason);
    if (checked.evaluation.verdict == Verdict::kFaster) {
      Timing confirmed = evaluator.confirm(checked);
      if (confirmed.significant)
        result.winner = Winner{candidate.id, confirmed, checked.evaluation, checked.materialized.files};
      else
        result.unconfirmed = candidate.id + " did not confirm in a fresh A/B session";
    }
    evaluator.release(checked);
    result.trajectory.push_back({1, candidate, checked.evaluation});
    result.evaluations = 1;
    result.stop_reason = "single candidate evaluated";
    result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    (void)s;
    return result;
  });
}

}  // namespace maxcode
