// The targets of a `maxcode run` job: the functions its input names, each located in
// the scope (and, for Google Benchmark programs, the entries each drives), or else the
// profile's hottest in scope, up to the input's max_targets. job.json keeps the top of
// the profile and why each hot entry left out is not a target.
#pragma once

#include <filesystem>

#include "runner/core/config.h"
#include "runner/job/job_record.h"
#include "runner/util/progress.h"

namespace maxcode {

struct JobTargetsRequest {
  std::filesystem::path source_dir;   // the job's checkout
  std::filesystem::path config_file;  // in it
  const Config& config;
  std::filesystem::path out;  // profile.json is written here
  bool keep_workspaces = false;
};

// Appends the targets to job.targets and the profile's top entries to job.profile.
// Throws JobFailure (job_failure.h): "profile" when profiling fails, "nothing-in-scope"
// when a named function is not found or no profiled one is in scope.
void choose_job_targets(const JobTargetsRequest& request, JobRecord& job, Progress& progress);

}  // namespace maxcode
