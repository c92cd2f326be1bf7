// Every command of an evaluation (build, tests, benchmark runs, tools) runs through one
// StepRunner: in the sandbox, with the allow-listed environment, and with the proofs
// that it went behind no one's back: the sources intact (workspace.h), the build
// outputs as they were sealed (build_seal.h), no process left running
// (leftover_processes.h). docs/evaluation.md "Each candidate" says why each is there.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runner/core/evaluation.h"
#include "runner/evaluate/build_seal.h"
#include "runner/evaluate/context.h"
#include "runner/util/process.h"

namespace maxcode {

using EnvVars = std::vector<std::pair<std::string, std::string>>;
using FileOverrides = std::map<std::string, std::string>;

struct StepResult {
  Outcome outcome;
  // What went on behind the harness's back, if anything (each makes the step a
  // rejection): source files changed, build outputs changed since they were sealed,
  // processes left running.
  std::vector<std::string> sources;
  std::string outputs;       // describe() of the broken seal
  std::string left_running;  // "pid 7 (sleep)"
  // All of it in one line ("" when nothing): the source files as before, then
  // "build outputs ..." and "processes left running: ...".
  std::string tampered;
  // The reason for a rejection, `during` naming the step ("the tests"); "" when clean.
  std::string tampering(const std::string& during) const;
};

// One command of a step: what runs, where, and what else it may see.
struct Step {
  Step(std::string name_in, std::string command_in, std::filesystem::path workspace_in, double timeout)
      : name(std::move(name_in)),
        command(std::move(command_in)),
        workspace(std::move(workspace_in)),
        timeout_s(timeout) {}
  // The candidate's files, which the step's workspace holds instead of the original's.
  Step& on(const FileOverrides& files) {
    overrides = &files;
    return *this;
  }
  // The same, where null means the original's files.
  Step& on(const FileOverrides* files) {
    overrides = files;
    return *this;
  }
  Step& with_env(EnvVars vars) {
    env = std::move(vars);
    return *this;
  }
  // Called with the process id as the command starts.
  Step& watch(std::function<void(long pid)> call) {
    started = std::move(call);
    return *this;
  }
  // Shown read-only in the sandbox.
  Step& showing(std::vector<std::string> paths) {
    readable_paths = std::move(paths);
    return *this;
  }

  std::string name;  // recorded in the evaluation's steps
  std::string command;
  std::filesystem::path workspace;
  double timeout_s = 0;
  const FileOverrides* overrides = nullptr;  // null: the original's files
  EnvVars env;                               // beyond the allow-listed environment
  std::function<void(long pid)> started;
  std::vector<std::string> readable_paths;
};

class StepRunner {
 public:
  explicit StepRunner(EvaluationContext& context) : ctx_(context) {}

  // Runs `step` and records it in `evaluation` (its steps, child time, isolation).
  StepResult run(Evaluation& evaluation, const Step& step);
  // Shown read-only to every step from now on (the injection libraries).
  void show_read_only(const std::string& path);
  // Builds in `workspace` may write the shared compiler cache: the original's only.
  void let_write_cache(const std::filesystem::path& workspace);
  // The workspace is gone: its seal with it.
  void forget(const std::filesystem::path& workspace);

 private:
  EnvVars base_env(const std::filesystem::path& workspace) const;
  Command command_for(const Step& step, bool writes_cache) const;
  // The step in the evaluation's record, and all it went behind the harness's back in one line.
  void record(Evaluation& evaluation, const Step& step, StepResult& result) const;
  std::shared_ptr<const BuildSeal> seal_of(const std::filesystem::path& workspace);

  EvaluationContext& ctx_;
  std::vector<std::string> readable_;
  std::set<std::filesystem::path> cache_writers_;
  // The seal on each workspace's build outputs, made by its build steps and checked
  // around every other step; kept by workspace path because every step runs here.
  std::map<std::filesystem::path, std::shared_ptr<const BuildSeal>> seals_;
  mutable std::mutex mutex_;  // guards seals_, readable_, cache_writers_
};

}  // namespace maxcode
