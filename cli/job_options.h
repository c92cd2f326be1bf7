// The options `optimize` and `eval` share: which repository, config and output.
#pragma once

#include <CLI/CLI.hpp>

#include "runner/job/job.h"

namespace maxcode::cli {

void add_job_options(CLI::App* command, JobOptions& options);

// `--policy NAME`, one of the config's policy names (runner/core/search_choices.h), for
// `optimize` and `run`.
void add_policy_option(CLI::App* command, std::string& policy);

}  // namespace maxcode::cli
