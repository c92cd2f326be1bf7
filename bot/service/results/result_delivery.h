// A finished job's results become pull requests, opened by the service with the App's
// installation token (runners never hold it): each target whose result has a confirmed
// winner goes through bot::deliver (idempotent: a deterministic branch per target, an
// existing PR updated, a closed one respected), the others say why nothing was found.
// Then the job is done, with one summary for the reply comment and the check run.
#pragma once

#include <string>

#include "bot/service/service_context.h"
#include "runner/core/run_result.h"

namespace maxcode::bot::service {

// Why a target's result has no winner, in one sentence (from result.json).
std::string why_no_winner(const RunResult& result);

enum class DeliveryStep { kFinished, kRetryLater };

// Delivers job `id` (state delivering). kRetryLater: GitHub or git failed in a way that
// may pass; the job stays in delivering and the worker tries again after a while.
DeliveryStep deliver_job_results(ServiceContext& context, std::int64_t id);

}  // namespace maxcode::bot::service
