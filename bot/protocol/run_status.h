// The status a runner reports for a job it ran (POST /api/runner/jobs/ID/result,
// docs/service.md "Runner protocol"): bot/worker writes it and bot/service reads it.
// The two share no other code (the worker speaks to the service over HTTP only), so the
// protocol's names live here, below both.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace maxcode::bot {

// finished: `maxcode run` ended and its results are in the body (whatever its exit
// code); failed: the runner could not run it (a retry may); cancelled: it was stopped
// because the service said so.
enum class RunStatus { kFinished, kFailed, kCancelled };

std::string run_status_name(RunStatus status);
// Nothing for a name of none: the body came over the network.
std::optional<RunStatus> run_status_named(std::string_view name);
// Every name, in the order above (the metrics' label values).
std::vector<std::string_view> run_status_names();

}  // namespace maxcode::bot
