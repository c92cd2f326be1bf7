// maxcode's work directories under the temporary directory (maxcode-run-*,
// maxcode-init-*): each records the process that owns it, so that one left behind by a
// run that was killed or crashed is found and removed by the next run (issue 22: every
// kill left its folder, with its workspaces and builds, behind).
#pragma once

#include <filesystem>
#include <string>

namespace maxcode {

// A new directory `parent`/`prefix`XXXXXX (mkdtemp, 0700) with an `owner` file naming
// this process (its pid and its start time, which tells a reused pid apart).
std::filesystem::path make_run_dir(const std::filesystem::path& parent, const std::string& prefix);

// Removes the directories `parent`/`prefix`* whose owner process is gone; those without
// an owner file (another tool's, or one being made) are left alone. Returns how many.
int remove_abandoned_run_dirs(const std::filesystem::path& parent, const std::string& prefix);

}  // namespace maxcode
