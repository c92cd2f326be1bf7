#include "runner/evaluate/step_runner.h"

#include <cstdlib>

#include "runner/core/candidate_env.h"
#include "runner/core/command_limits.h"
#include "runner/evaluate/evaluator_steps.h"
#include "runner/evaluate/leftover_processes.h"
#include "runner/workspace/workspace.h"

namespace maxcode {

namespace fs = std::filesystem;
using namespace evaluator_steps;

std::string StepResult::tampering(const std::string& during) const {
  std::vector<std::string> parts;
  if (!sources.empty()) parts.push_back("source files changed during " + during + ": " + join(sources, ", "));
  if (!outputs.empty()) parts.push_back("build outputs changed during " + during + ": " + outputs);
  if (!left_running.empty()) parts.push_back("left a process running after " + during + ": " + left_running);
  return join(parts, "; ");
}

void StepRunner::show_read_only(const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  readable_.push_back(path);
}

void StepRunner::let_write_cache(const fs::path& workspace) {
  std::lock_guard<std::mutex> lock(mutex_);
  cache_writers_.insert(workspace);
}

void StepRunner::forget(const fs::path& workspace) {
  std::lock_guard<std::mutex> lock(mutex_);
  seals_.erase(workspace);
}

std::shared_ptr<const BuildSeal> StepRunner::seal_of(const fs::path& workspace) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = seals_.find(workspace);
  return found == seals_.end() ? nullptr : found->second;
}

EnvVars StepRunner::base_env(const fs::path& ws) const {
  const EvaluatorOptions& options = ctx_.options;
  EnvVars env{{"MAXCODE_WORKSPACE", ws.string()}};
  if (!options.ccache_dir.empty()) {
    // Workspaces differ only in their path; BASEDIR/NOHASHDIR let their builds share hits.
    env.insert(env.end(), {{"CCACHE_DIR", options.ccache_dir.string()},
                           {"CCACHE_BASEDIR", ws.string()},
                           {"CCACHE_NOHASHDIR", "true"},
                           {"CMAKE_C_COMPILER_LAUNCHER", "ccache"},
                           {"CMAKE_CXX_COMPILER_LAUNCHER", "ccache"},
                           {"CMAKE_CUDA_COMPILER_LAUNCHER", "ccache"}});
  }
  if (ctx_.gpu && ctx_.config.gpu.ptxas_report) {
    // nvcc reads this in every build system; ptxas then reports registers, spills and
    // shared memory per kernel into the build output (it changes no generated code).
    // Read here, not at the CLI: the child's own value is extended, not configuration.
    const char* theirs = std::getenv("NVCC_APPEND_FLAGS");
    env.push_back(
        {"NVCC_APPEND_FLAGS", std::string(theirs && *theirs ? std::string(theirs) + " " : "") + "-Xptxas=-v"});
  }
  return env;
}

// The command of a step: sandboxed, with the allow-listed environment, the workspace
// writable and little else.
Command StepRunner::command_for(const Step& step, bool writes_cache) const {
  const Config& config = ctx_.config;
  const fs::path& workspace = step.workspace;
  const fs::path& ccache_dir = ctx_.options.ccache_dir;
  Command cmd;
  cmd.started = step.started;
  cmd.shell = step.command;
  cmd.cwd = workspace.string();
  // Candidate code sees an allow-listed environment, never maxcode's (model keys, tokens).
  EnvVars step_env = base_env(workspace);
  if (!ccache_dir.empty() && !writes_cache)
    step_env.insert(step_env.end(),
                    {{"CCACHE_READONLY", "true"}, {"CCACHE_TEMPDIR", (workspace / ".maxcode-ccache-tmp").string()}});
  step_env.insert(step_env.end(), step.env.begin(), step.env.end());
  cmd.env = candidate_env(config, process_environment(), workspace / ".maxcode-home", step_env);
  cmd.parent_env = ParentEnv::kDrop;
  cmd.timeout_s = step.timeout_s;
  cmd.output_cap = config.workspace.output_cap_bytes;
  cmd.isolate = config.workspace.isolate;
  apply_workspace_limits(cmd, config.workspace);
  cmd.writable_paths = {workspace.string()};
  if (!ccache_dir.empty() && writes_cache) cmd.writable_paths.push_back(ccache_dir.string());
  // The injection libraries live in the work directory, which the private /tmp hides;
  // shown read-only, so that a candidate cannot replace the profiler that times it.
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cmd.readable_paths = readable_;
  }
  if (!ccache_dir.empty() && !writes_cache) cmd.readable_paths.push_back(ccache_dir.string());
  // And the directory of the profiler's socket, which the run reports through.
  cmd.readable_paths.insert(cmd.readable_paths.end(), step.readable_paths.begin(), step.readable_paths.end());
  // And what the build declares it needs of the host.
  cmd.readable_paths.insert(cmd.readable_paths.end(), config.workspace.sandbox_paths.begin(),
                            config.workspace.sandbox_paths.end());
  // Run by root, the sandbox runs the command as an unprivileged user, who must be able
  // to write the workspace (and the cache, for the original's builds). What it owns
  // already is left alone, so that no sealed output changes.
  if (cmd.isolate) {
    for (const auto& path : cmd.writable_paths) hand_to_sandbox_user(path);
  }
  return cmd;
}

StepResult StepRunner::run(Evaluation& evaluation, const Step& step) {
  static const FileOverrides kNone;
  const FileOverrides& overrides = step.overrides ? *step.overrides : kNone;
  const Config& config = ctx_.config;
  const fs::path& workspace = step.workspace;
  // A step that builds (the project's configure or build command, also as the call
  // check rebuilds) seals what it wrote; every other step runs on sealed outputs and
  // must leave them as they were, and no process behind it.
  const bool builds = step.command == config.build.command ||
                      (!config.build.configure.empty() && step.command == config.build.configure);
  // The compiler cache outlives this run, and later runs take its objects on trust: only
  // the original's builds (the user's code as committed) write it. A candidate's build
  // reads it (CCACHE_READONLY, its scratch files in the workspace), and no step that
  // runs candidate code can write it: a poisoned object of the original would make a
  // copy of the original look faster in a later run.
  bool writes_cache = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    writes_cache = builds && cache_writers_.count(workspace) > 0;
  }
  Command cmd = command_for(step, writes_cache);
  std::set<std::string> not_outputs;  // the sources, proven by tampered_files instead
  if (builds) {
    for (const auto& [path, hash] : ctx_.source.manifest) not_outputs.insert(path);
    for (const auto& [path, content] : overrides) not_outputs.insert(path);
  }
  const std::shared_ptr<const BuildSeal> seal = seal_of(workspace);
  StepResult result;
  // Nothing may run what changed since the last step ended.
  if (seal) {
    if (auto breaks = verify_seal(workspace, *seal); !breaks.empty()) {
      result.outputs = describe(breaks);
      result.outcome.spawn_failed = true;
      result.outcome.spawn_error = "not run: build outputs changed since they were built: " + result.outputs;
    }
  }
  const bool runs = result.outputs.empty();
  std::map<std::string, FileStat> before;
  if (builds && runs) before = stat_tree(workspace, not_outputs);
  const Isolation isolation = cmd.isolate ? available_isolation() : Isolation::kNone;
  const bool watch = !builds && can_watch_for_leftovers(isolation);
  if (watch) cmd.shell = watch_for_leftovers(step.command);
  result.outcome.isolation = isolation;
  if (runs) result.outcome = run_isolated(cmd, isolation);
  if (watch) result.left_running = take_leftovers(result.outcome);
  // Whatever ran may have written anywhere in its workspace: prove the sources intact,
  // and the build outputs.
  result.sources = tampered_files(ctx_.source, workspace, overrides);
  if (builds && runs) {
    auto sealed =
        std::make_shared<const BuildSeal>(seal_build(workspace, before, seal ? *seal : BuildSeal{}, not_outputs));
    std::lock_guard<std::mutex> lock(mutex_);
    seals_[workspace] = std::move(sealed);
  } else if (seal && runs) {
    result.outputs = describe(verify_seal(workspace, *seal));
  }
  record(evaluation, step, result);
  return result;
}

void StepRunner::record(Evaluation& evaluation, const Step& step, StepResult& result) const {
  StepRecord record{step.name, step.command, "", 0, ""};
  evaluation.child_s += result.outcome.wall_s;
  evaluation.isolation = isolation_name(result.outcome.isolation);
  record.status = result.outcome.describe();
  record.wall_s = result.outcome.wall_s;
  if (!result.outcome.ok()) record.output_tail = result.outcome.tail(kFeedbackBytes);
  std::vector<std::string> tampered = result.sources;
  if (!result.outputs.empty()) tampered.push_back("build outputs " + result.outputs);
  if (!result.left_running.empty()) tampered.push_back("processes left running: " + result.left_running);
  result.tampered = join(tampered, ", ");
  evaluation.steps.push_back(std::move(record));
}

}  // namespace maxcode
