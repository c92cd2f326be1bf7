#include "runner/job/target_search.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>

#include "runner/core/candidate_env.h"
#include "runner/evaluate/environment.h"
#include "runner/search/method.h"
#include "runner/store/rollout_store.h"
#include "runner/util/files.h"
#include "runner/util/run_dir.h"
#include "runner/util/json_io.h"
#include "runner/util/process.h"
#include "runner/util/secrets.h"
#include "runner/workspace/locate.h"
#include "runner/workspace/patch.h"
#include "runner/workspace/unit.h"

namespace maxcode {

namespace fs = std::filesystem;

namespace {

// Everything a search sets up before the first candidate.
struct Session {
  fs::path work_dir;
  SourceSnapshot source;
  Located located;
  Unit unit;
  std::vector<Knob> knobs;
  RunInfo info;
};

fs::path cache_dir(const Environment& env) {
  return env.cache_dir.empty() ? fs::temp_directory_path() / "maxcode-cache" : env.cache_dir;
}

bool have_ccache() {
  Command probe;
  probe.shell = "command -v ccache";
  probe.timeout_s = 5;
  return run(probe).ok();
}

std::vector<Knob> collect_knobs(const Config& config, const Session& s) {
  const std::string& file = s.located.target.file;
  std::vector<Knob> knobs = find_declared_knobs(read_text(s.source.root / file), file);
  for (const KnobConfig& kc : config.search.knobs) {
    const std::string knob_file = kc.file.empty() ? file : kc.file;
    Knob knob = locate_knob(read_text(s.source.root / knob_file), knob_file, kc);
    auto same = std::find_if(knobs.begin(), knobs.end(), [&](const Knob& k) { return k.name == knob.name; });
    if (same != knobs.end()) *same = knob;  // the config wins over the comment
    else knobs.push_back(knob);
  }
  return knobs;
}

void setup(Session& s, const TargetSearch& o) {
  const Config& config = o.config;
  // What a killed or crashed run left behind goes first (its owner process is gone).
  remove_abandoned_run_dirs(fs::temp_directory_path(), "maxcode-run-");
  s.work_dir = make_run_dir(fs::temp_directory_path(), "maxcode-run-");
  s.source = capture_source(o.repo, s.work_dir / "source", config.workspace.exclude);
  s.located = locate_target(s.source.root, config.scope, o.function,
                            o.signature.empty() ? config.targets.signature : o.signature, o.file);
  s.unit = find_unit(s.source.root, config.scope, s.located, config.targets.unit);
  s.located.target.unit = s.unit.names();
  s.located.target.unit_notes = s.unit.notes;
  s.knobs = collect_knobs(config, s);

  s.info.command = o.candidate_file.empty() ? "optimize" : "eval";
  s.info.repository = s.source.repo.string();
  s.info.commit = s.source.commit;
  s.info.local_changes = s.source.local_changes;
  s.info.target = s.located.target;
  s.info.started_at = utc_now();
  const AcceptanceConfig& a = config.acceptance;
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

SearchResult search(const TargetSearch& o, Session& s, Evaluator& evaluator, Progress& progress) {
  const SearchConfig& sc = o.config.search;
  s.info.policy = search_policy_name(sc.policy);
  Spend spend({sc.max_tokens, sc.max_dollars});
  if (o.resume) spend.restore(o.resume->spend);
  const std::string file_text = read_text(s.source.root / s.located.target.file);
  auto method = make_method(
      {o.config, o.repo, o.replay_dir, make_target_context(s.located.target, file_text, s.unit), s.knobs, o.env},
      spend);

  // Everything a run learns is kept as it happens: trajectory.jsonl, the rollout
  // store, and a checkpoint after every step.
  const std::string run_id = o.resume ? o.resume->run_id : new_run_id();
  RolloutStore store(o.db.empty() ? o.out / "rollouts.sqlite" : o.db);
  store.begin_run({run_id, s.info.started_at, s.info.repository, s.info.commit, s.located.target,
                   method->context.language, search_policy_name(sc.policy), evaluator.baseline_definition(),
                   method->prompts.system});
  const fs::path trajectory_file = o.out / "trajectory.jsonl";
  if (!o.resume) write_text(trajectory_file, "");
  std::ofstream trajectory(trajectory_file, std::ios::app);
  int seq = o.resume ? static_cast<int>(o.resume->state.trajectory.size()) : 0;
  double best_so_far = 1.0;
  if (o.resume)
    for (const auto& e : o.resume->state.trajectory) best_so_far = std::max(best_so_far, e.evaluation.reward());

  SearchHooks hooks;
  hooks.critic = method->critic.get();
  hooks.reranker = method->reranker.get();
  hooks.spend = &spend;
  hooks.stop_requested = o.stop_requested;
  hooks.on_entry = [&](const TrajectoryEntry& entry) {
    trajectory << redact_secrets(dump_json(trajectory_line(entry))) << "\n";
    trajectory.flush();
    store.add_candidate(run_id, seq++, entry, best_so_far);
    best_so_far = std::max(best_so_far, entry.evaluation.reward());
  };
  hooks.on_step = [&](const SearchState& state) {
    write_checkpoint(o.out,
                     {run_id, search_policy_name(sc.policy), s.located.target, state, spend.to_json(),
                      fs::absolute(o.repo).string(), o.config.file.empty() ? "" : fs::absolute(o.config.file).string(),
                      o.replay_dir.empty() ? "" : fs::absolute(o.replay_dir).string()});
  };
  SearchLimits limits{sc.max_evaluations, sc.batch, sc.proposals > 0 ? sc.proposals : sc.batch,
                      sc.max_wall_s, sc.max_tokens, sc.max_dollars, o.max_timing_s};
  SearchResult result = run_search(evaluator, *method->policy, s.located.target, limits, progress, hooks,
                                   o.resume ? &o.resume->state : nullptr);
  store.finish_run(run_id, result.winner ? std::optional<std::string>(result.winner->id) : std::nullopt,
                   result.winner ? to_json(result.winner->confirmed.speedup) : nlohmann::json(nullptr));
  return result;
}

SearchResult evaluate_one(const TargetSearch& o, Session& s, Evaluator& evaluator, Progress& progress) {
  s.info.policy = "single candidate";
  Candidate candidate = read_candidate_file(o.candidate_file, "cli");
  SearchResult result;
  const auto start = std::chrono::steady_clock::now();
  Checked checked = evaluator.check(evaluator.materialize(candidate));
  evaluator.time(checked);
  progress.note("  " + candidate.id + ": " + verdict_name(checked.evaluation.verdict) + " — " +
                checked.evaluation.reason);
  result.trajectory.push_back({1, candidate, checked.evaluation});
  // The same confirmation as a search's winner (the traffic floor included).
  if (checked.evaluation.verdict == Verdict::kFaster)
    confirm_winner(evaluator, checked, result.trajectory, result, progress);
  evaluator.release(checked);
  result.evaluations = 1;
  result.stop_reason = "single candidate evaluated";
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

// Removes the session's temporary tree however the search ends.
struct WorkDirGuard {
  const Session& s;
  bool keep;
  ~WorkDirGuard() {
    if (s.work_dir.empty()) return;
    if (!keep) {
      remove_workspace(s.work_dir);
      return;
    }
    // Kept for the user: without an owner, a later run's sweep of abandoned run folders
    // (util/run_dir.h) leaves it alone.
    std::error_code ignored;
    std::filesystem::remove(s.work_dir / "owner", ignored);
  }
};

}  // namespace

std::string new_run_id() {
  std::string id = utc_now();
  id.erase(std::remove_if(id.begin(), id.end(), [](char c) { return c == '-' || c == ':'; }), id.end());
  char suffix[8];
  std::snprintf(suffix, sizeof suffix, "%06x", static_cast<unsigned>(std::random_device{}() & 0xffffff));
  return id + "-" + suffix;
}

namespace {

// What the policy needs was checked by the caller before anything was built
// (check_policy_inputs: job.cc, run_job.cc); what only the target can say is checked
// here, before the original is built or timed.
void check_target_can_change(const TargetSearch& o, const Session& s) {
  if (!o.candidate_file.empty()) return;
  if (o.config.search.policy == SearchPolicy::kTune && s.knobs.empty())
    throw PolicyError("the tune policy has nothing to tune in " + s.located.target.function + " (" +
                      s.located.target.file + "): add search.knobs to " + o.config.file.string() +
                      " or a `// maxcode: tune NAME v1 v2 ...` comment in that file, or choose another policy");
  // Nothing the policy has can change the target: no original built, no A/A session.
  const std::string why = why_nothing_reaches(o.config, o.repo, o.replay_dir, s.unit.names(), s.located.target.file);
  if (!why.empty())
    throw NothingToTry(why + ", so " + s.located.target.function +
                       " is not searched (its original is not built or timed)");
}

void note_target(const Session& s, Progress& progress) {
  progress.note("maxcode " + s.info.command + ": " + s.located.target.function + " in " + s.located.target.file + ":" +
                std::to_string(s.located.target.line_begin));
  if (s.unit.functions.size() > 1) {
    std::string names;
    for (const std::string& n : s.located.target.unit) names += (names.empty() ? "" : ", ") + n;
    progress.note("unit: " + names);
  }
  for (const std::string& note : s.unit.notes) progress.note("unit: " + note);
}

// The original built, checked and timed against itself (A/A), and what the run's
// record keeps of it: the audit, its tests, ncu's kernels, the noise.
void prepare_original(Evaluator& evaluator, Session& s, Progress& progress) {
  evaluator.prepare_baseline();
  s.info.audit = evaluator.audits();
  s.info.tests = to_json(evaluator.original_tests());
  s.info.tests["judged_by"] = evaluator.original_tests().reported() ? "reports" : "exit code";
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
                noise.speedup.median, noise.speedup.low, noise.speedup.high, noise.speedup.rounds, noise.noise_floor);
  progress.note(line);
}

}  // namespace

TargetSearchOutcome search_target(const TargetSearch& o, Progress& progress) {
  const auto start = std::chrono::steady_clock::now();
  Session s;
  WorkDirGuard guard{s, o.keep_workspaces};
  // The config may name key variables that do not look secret by name (api_key_env).
  add_secret_variables(secret_variable_names(o.config));
  setup(s, o);
  check_target_can_change(o, s);
  fs::path ccache;
  if (have_ccache()) {
    ccache = cache_dir(o.env) / "ccache";
    fs::create_directories(ccache);
  }
  Evaluator evaluator(o.config, s.source, s.located.target, s.unit, s.knobs,
                      {s.work_dir, ccache, o.keep_workspaces, o.env}, progress);
  s.info.environment = describe_environment(evaluator.isolation());
  note_target(s, progress);
  prepare_original(evaluator, s, progress);

  fs::create_directories(o.out);
  TargetSearchOutcome outcome;
  outcome.result = o.candidate_file.empty() ? search(o, s, evaluator, progress) : evaluate_one(o, s, evaluator, progress);
  s.info.warnings = evaluator.warnings();
  s.info.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  outcome.patch = make_patch(s, outcome.result);
  write_outputs(o.out, s.info, outcome.result, outcome.patch);
  outcome.info = s.info;
  if (o.keep_workspaces) progress.note("workspaces kept in " + s.work_dir.string());
  return outcome;
}

}  // namespace maxcode
