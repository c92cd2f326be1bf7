#include "runner/util/child_env.h"

#include <algorithm>

#include "runner/util/secrets.h"

extern char** environ;

namespace maxcode {

EnvVars process_environment() {
  EnvVars out;
  for (char** entry = environ; entry && *entry; ++entry) {
    std::string text = *entry;
    std::size_t eq = text.find('=');
    if (eq == std::string::npos) continue;
    out.emplace_back(text.substr(0, eq), text.substr(eq + 1));
  }
  return out;
}

EnvAllowList default_env_allow_list() {
  EnvAllowList allow;
  allow.names = {
      "PATH", "LANG", "LANGUAGE", "LC_*", "TZ", "TERM", "TMPDIR",
      // Compilers and the build: what CMake, make and autotools read.
      "CC", "CXX", "CPP", "FC", "AR", "LD", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "CUDAFLAGS",
      "CUDACXX", "CUDAHOSTCXX", "CMAKE_*", "CCACHE_*", "PKG_CONFIG_PATH",
      // Where libraries and headers are: a CUDA toolkit outside the default paths.
      "LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH",
      "CUDA_*", "NVIDIA_*", "NVCC_*",
      "MAXCODE_SEED", "MAXCODE_WORKSPACE"};
  return allow;
}

bool env_allowed(const std::string& name, const EnvAllowList& allow) {
  if (looks_secret(name)) return false;
  if (std::find(allow.secret_names.begin(), allow.secret_names.end(), name) != allow.secret_names.end())
    return false;
  for (const auto& pattern : allow.names) {
    if (!pattern.empty() && pattern.back() == '*') {
      if (name.compare(0, pattern.size() - 1, pattern, 0, pattern.size() - 1) == 0) return true;
    } else if (name == pattern) {
      return true;
    }
  }
  return false;
}

EnvVars filter_env(const EnvVars& from, const EnvAllowList& allow) {
  EnvVars out;
  for (const auto& entry : from) {
    if (env_allowed(entry.first, allow)) out.push_back(entry);
  }
  return out;
}

}  // namespace maxcode
