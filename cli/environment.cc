#include "cli/environment.h"

#include <cstdlib>
#include <cstring>

#include "runner/instrument/inject_paths.h"
#include "runner/util/process.h"

extern char** environ;

namespace maxcode {

namespace fs = std::filesystem;

namespace {

std::optional<std::string> variable(const char* name) {
  const char* value = std::getenv(name);
  if (!value) return std::nullopt;
  return std::string(value);
}

// Set and not empty.
std::optional<std::string> given(const char* name) {
  auto value = variable(name);
  return value && !value->empty() ? value : std::nullopt;
}

fs::path cache_dir() {
  // Set but empty counts as given for MAXCODE_CACHE_DIR, XDG_CACHE_HOME and HOME, as it
  // did when the job read them itself.
  if (auto dir = variable("MAXCODE_CACHE_DIR")) return *dir;
  if (auto xdg = variable("XDG_CACHE_HOME")) return fs::path(*xdg) / "maxcode";
  if (auto home = variable("HOME")) return fs::path(*home) / ".cache" / "maxcode";
  return fs::temp_directory_path() / "maxcode-cache";
}

}  // namespace

Environment read_environment() {
  Environment env;
  env.cuda_visible_devices = variable("CUDA_VISIBLE_DEVICES");
  env.lock_dir = given("MAXCODE_LOCK_DIR").value_or(fs::temp_directory_path().string());
  env.cache_dir = cache_dir();
  for (char** entry = environ; *entry; ++entry)
    if (const char* eq = std::strchr(*entry, '='))
      env.variables.emplace(std::string(*entry, static_cast<std::size_t>(eq - *entry)), std::string(eq + 1));
  return env;
}

void apply_process_environment() {
  if (auto isolation = given("MAXCODE_ISOLATION")) force_isolation(*isolation);
  if (auto dir = given("MAXCODE_INJECT_DIR")) set_inject_dir(*dir);
}

}  // namespace maxcode
