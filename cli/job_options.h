// The options `optimize` and `eval` share: which repository, config and output.
#pragma once

#include <CLI/CLI.hpp>

#include "runner/job/job.h"

namespace maxcode::cli {

void add_job_options(CLI::App* command, JobOptions& options);

}  // namespace maxcode::cli
