// The environment of every command that runs a candidate's (or the user's) code: the
// build, tests, benchmarks, profiler runs, sanitizer and ncu runs.
//
// It starts empty: the allow-list of child_env.h, the names the config adds
// (`workspace.env_allow`), HOME pointing into the run's own writable directory, then
// the variables maxcode sets for the step. The config's key variables (the
// `api_key_env` names of its llm section) are never passed on, even when allowed.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "runner/core/config.h"
#include "runner/util/child_env.h"

namespace maxcode {

// The variables that name model keys in `config.llm` (every "api_key_env"), plus the
// defaults the providers read when none is named.
std::vector<std::string> secret_variable_names(const Config& config);

// `from` (maxcode's environment) filtered by the allow-list and the config, HOME set to
// `home` (created), then `step_env` added (later names win). The result is the whole
// environment of a Command with ParentEnv::kDrop.
EnvVars candidate_env(const Config& config, const EnvVars& from, const std::filesystem::path& home,
                      const EnvVars& step_env);

}  // namespace maxcode
