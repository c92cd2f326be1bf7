#include "bot/service/queue/job_state.h"

#include "runner/util/enum_names.h"

namespace maxcode::bot::service {

namespace {

constexpr EnumNames<JobState, 6> kNames{{
    {JobState::kQueued, "queued"},
    {JobState::kRunning, "running"},
    {JobState::kDelivering, "delivering"},
    {JobState::kDone, "done"},
    {JobState::kFailed, "failed"},
    {JobState::kCancelled, "cancelled"},
}};

}  // namespace

std::string job_state_name(JobState state) { return enum_name(kNames, state); }

JobState job_state_from_name(std::string_view name) { return enum_from_name(kNames, name, "job state"); }

}  // namespace maxcode::bot::service
