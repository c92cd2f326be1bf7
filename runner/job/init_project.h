// `maxcode init`: from a repository to a checked `.maxcode.json`.
//
// It scans the repository (runner/workspace/project_scan.h), writes the proposed config
// with comments (init_config.h), reads it back with the strict reader, and runs the
// original once the way `maxcode optimize` will (build, tests, each benchmark with every
// seed, the same seed twice, the benchmark audit), with no target function chosen yet.
// What it found and what the person still has to decide come back in an InitReport;
// printing is the caller's.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "runner/core/environment.h"
#include "runner/job/init_config.h"
#include "runner/util/progress.h"
#include "runner/workspace/project_scan.h"

namespace maxcode {

struct InitOptions {
  std::filesystem::path repo = ".";
  std::filesystem::path config;  // default: <repo>/.maxcode.json
  bool force = false;            // replace an existing config
  bool check = true;             // run the original once
  // Check the existing config as it is, writing nothing: after a failed check, the
  // person fixes the config by hand and checks again (`--force` would replace the fix).
  bool recheck = false;
  Environment env;               // read by the CLI: the GPUs the check may time on
};

// One check of the original, as a line: "builds: yes".
struct InitCheck {
  std::string what;
  bool ok = false;
  std::string detail;  // why not, or a figure
};

struct InitReport {
  std::filesystem::path config_file;
  ProjectScan scan;
  ProposedConfig proposed;
  bool checked = false;
  std::vector<InitCheck> checks;
  std::vector<std::string> findings;   // warnings of the check and the benchmark audit
  std::vector<std::string> decisions;  // what the person still decides
  bool rechecked = false;              // the existing config was checked, nothing written
  bool ok() const;                     // every check passed
};

// Throws NoBenchmarkError (nothing to time; nothing written), ConfigError (the written
// file does not read back: a bug), std::runtime_error (an existing config without
// `force`, an unreadable repository). A failing original is not an exception: it is a
// failed check in the report, with the config kept for the person to fix.
InitReport init_project(const InitOptions& options, Progress& progress);

}  // namespace maxcode
