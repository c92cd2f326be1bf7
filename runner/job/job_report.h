// A job's outputs for people: DIR/report.html (every target with its verdict, PR and
// plot, then the profile the targets came from) and the summary table printed at the
// end of `maxcode run`. Both are drawn from job.json alone (and each target's
// progress.svg), so they can be redrawn at any point of a job.
#pragma once

#include <filesystem>
#include <string>

#include "runner/job/job_record.h"

namespace maxcode {

std::string render_job_report(const JobRecord& job, const std::filesystem::path& out_dir);

// Fixed-width text: one row per target (function, share, status, speedup, PR).
std::string render_job_summary(const JobRecord& job);

}  // namespace maxcode
