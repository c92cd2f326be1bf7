// How a job shows on GitHub: a check run on its commit (queued -> in progress ->
// completed with a conclusion) and, when a comment asked for it, one reply comment on
// that issue or pull request, updated in place as the job moves (accepted, queued
// position, running, the result with the PR link or why nothing was found). Both are
// idempotent: the comment is found again by a hidden marker, the check run by the id
// the queue keeps, so a restart never posts a second one; reports are made one at a time,
// so two threads reporting one job never create two check runs. A job's check run is
// named after it (check_run_name), and a failed job that a comment asked for concludes
// neutral: its reply says why.
#pragma once

#include <string>

#include "bot/service/queue/job_queue.h"
#include "bot/service/service_context.h"

namespace maxcode::bot::service {

// The reply comment's text for the job as it is now.
std::string job_comment(const Job& job, int queue_position);
// The check run's name: "maxcode: optimize FUNCTION", "maxcode: optimize top targets
// (push)": one per job on a commit.
std::string check_run_name(const Job& job);
// The marker that finds the job's reply comment again.
std::string job_marker(std::int64_t job_id);

// Updates the comment and the check run; failures are logged and counted, never thrown.
// A rate limit or a server error defers the report (github_retry.h): it is made again,
// with the job as it is then, when GitHub said it may be.
void report_job(ServiceContext& context, std::int64_t job_id);

}  // namespace maxcode::bot::service
