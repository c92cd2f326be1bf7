// A job's state in the queue (docs/service.md "The queue"): queued -> running ->
// delivering -> done, and failed, cancelled. The store, the API and the pages hold it by
// name; the code compares the enum.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

namespace maxcode::bot::service {

enum class JobState { kQueued, kRunning, kDelivering, kDone, kFailed, kCancelled };
// Every state, in the order above.
inline constexpr JobState kJobStates[] = {JobState::kQueued, JobState::kRunning, JobState::kDelivering,
                                          JobState::kDone,   JobState::kFailed,  JobState::kCancelled};

// "queued", "running", "delivering", "done", "failed", "cancelled".
std::string job_state_name(JobState state);
// The state of that name; throws std::invalid_argument naming a name that is none.
JobState job_state_from_name(std::string_view name);

// Printed by name in test failures and logs.
inline std::ostream& operator<<(std::ostream& out, JobState state) { return out << job_state_name(state); }

}  // namespace maxcode::bot::service
