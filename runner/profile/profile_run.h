// Profiling a repository: build it in a workspace (never in the user's copy), run each
// configured benchmark under both profilers (the CPU sampler by LD_PRELOAD, the CUPTI
// injection by CUDA_INJECTION64_PATH), and rank what they recorded.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "runner/core/config.h"
#include "runner/profile/profile.h"
#include "runner/util/error.h"
#include "runner/util/progress.h"

namespace maxcode {

struct ProfileOptions {
  std::filesystem::path repo = ".";
  std::filesystem::path config;       // default: <repo>/.maxcode.json
  std::filesystem::path out = "maxcode-out";
  int top = 20;                       // rows of the table
  double min_share = 0.005;           // rows below this share are not shown
  std::vector<std::filesystem::path> imports;  // rank these files instead of running anything
  bool build = true;                  // false: run the benchmarks in the repository as built
  bool debug_flags = true;            // add -g -fno-omit-frame-pointer through CFLAGS & co.
  bool keep_workspaces = false;
  bool quiet = false;
};

// The build or the setup failed: no profile at all.
class ProfileError : public Error {
 public:
  using Error::Error;
};

// A copy of the repository built for profiling: the sources captured into DIR/source,
// built in DIR/ws with debug flags, sandboxed as the benchmarks are. Profiling it again
// and again (options.repo = root, options.build = false) builds once. Throws
// ProfileError when the build fails.
struct BuiltCopy {
  std::filesystem::path root;
  std::string commit;
};
BuiltCopy build_for_profiling(const ProfileOptions& options, const Config& config, const std::filesystem::path& dir,
                              Progress& progress);

// Builds (unless options.build is false), runs every benchmark under the profilers and
// ranks the result. A benchmark that crashes or times out keeps its partial profile;
// its run says what happened. Throws ProfileError when nothing can be profiled.
Profile profile_benchmarks(const ProfileOptions& options, const Config& config, Progress& progress);

// Ranks existing profile files (options.imports) against the repository's sources.
Profile profile_imports(const ProfileOptions& options, const ScopeConfig& scope);

}  // namespace maxcode
