// Scheduled sweeps into the history of `maxcode sweep`, and the regressions found there
// reported on GitHub as each repository's config says (`repositories.OWNER/NAME.
// regressions`):
//   "issue"      one open issue per (repository, function), labelled maxcode-regression
//                and found again by a hidden marker: a later night's regression of the
//                same function updates that issue and adds a comment for the night,
//                never a second issue;
//   "check-run"  a check run "maxcode regressions" (conclusion failure) on the night's
//                commit;
//   "none"       only the history, the trend page and the log.
// A scheduled job's night is the minute it was created, in UTC ("2026-11-24 02:00"), so
// schedules that run more often than nightly keep one point per run.
// Reporting is idempotent (markers per night, the check run found by its external id),
// so the retry after a rate limit or a crash (github_retry.h) reports nothing twice.
#pragma once

#include <string>
#include <vector>

#include "bot/service/queue/job_queue.h"
#include "bot/service/service_context.h"
#include "runner/core/night.h"

namespace maxcode::bot::service {

// The night a scheduled job is recorded under (above).
std::string sweep_night(const Job& job);

// Records the targets of a finished scheduled job (its job.json) in the history store,
// under the job's repository (OWNER/NAME) and night; `deliveries` (what the service did
// with each target: {target, outcome, pr}) fill the PR columns. Returns the rows.
int record_sweep(const ServiceContext& context, const Job& job, const std::vector<TargetDelivery>& deliveries);

// The regressions the history shows for the job's repository on the job's night.
std::vector<Regression> regressions_of(const ServiceContext& context, const Job& job);

// Reports them (see above); returns how many were reported. Throws on a GitHub failure
// (the caller defers and retries).
int report_regressions(ServiceContext& context, std::int64_t job_id);

// The texts, for tests and for people.
std::string regression_marker(const Regression& r);
std::string regression_night_marker(const Regression& r);
std::string regression_title(const Regression& r);
std::string regression_text(const Regression& r);

}  // namespace maxcode::bot::service
