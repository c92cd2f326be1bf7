// The process environment as maxcode's configuration: read once, by the CLI
// (cli/environment.cc, the only reader), and handed down in the options of each command
// (JobOptions, JobRun, InitOptions, TargetSearch, EvaluatorOptions, MethodInputs), so
// that a service running many jobs can give each its own (docs/architecture.md, "The
// environment: read at the CLI").
//
// Not here, on purpose: what a child process inherits (PATH, LD_PRELOAD,
// NVCC_APPEND_FLAGS are passed through or extended for it), and the libraries in
// runner/inject/, which run inside the user's program and can only read theirs.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace maxcode {

struct Environment {
  // CUDA_VISIBLE_DEVICES: the GPUs a run may time on; unset: every GPU.
  std::optional<std::string> cuda_visible_devices;
  // MAXCODE_LOCK_DIR: where the per-GPU timing locks live, shared by every maxcode on
  // the machine; empty: the temporary directory.
  std::filesystem::path lock_dir;
  // MAXCODE_CACHE_DIR, else $XDG_CACHE_HOME/maxcode, else $HOME/.cache/maxcode, else
  // <tmp>/maxcode-cache: the build cache (ccache) shared across runs; empty (an
  // Environment not read by the CLI, as in tests): <tmp>/maxcode-cache.
  std::filesystem::path cache_dir;
  // Every variable as the CLI found it, for the values a config names by variable
  // (llm.*.api_key_env): looked up here, so that nothing below cli/ reads them with
  // getenv and a service can hand each job its own. Never written to a result.
  std::map<std::string, std::string> variables;

  std::optional<std::string> variable(const std::string& name) const {
    auto it = variables.find(name);
    return it == variables.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
};

}  // namespace maxcode
