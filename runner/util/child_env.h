// The environment of commands that run untrusted code (a candidate's build, tests and
// benchmarks): built from nothing plus an allow-list, never a copy of maxcode's own,
// which holds model keys and GitHub tokens.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace maxcode {

using EnvVars = std::vector<std::pair<std::string, std::string>>;

// maxcode's own environment as name/value pairs, in order.
EnvVars process_environment();

struct EnvAllowList {
  // Names passed on; a name ending in '*' passes every name with that prefix.
  std::vector<std::string> names;
  // Never passed on, even when allowed by name: these and every name that
  // looks_secret() (secrets.h).
  std::vector<std::string> secret_names;
};

// What builds, tests and benchmarks need, and nothing else: PATH, locale and terminal,
// TMPDIR, compilers and their flags, library and include paths, CUDA/NVIDIA/NVCC,
// CMake and ccache settings, MAXCODE_SEED and MAXCODE_WORKSPACE.
EnvAllowList default_env_allow_list();

bool env_allowed(const std::string& name, const EnvAllowList& allow);

// The variables of `from` that `allow` passes on, in order.
EnvVars filter_env(const EnvVars& from, const EnvAllowList& allow);

}  // namespace maxcode
