#include "runner/job/job_status.h"

#include "runner/util/enum_names.h"

namespace maxcode {

namespace {

constexpr EnumNames<JobStatus, 4> kJobNames{{
    {JobStatus::kRunning, "running"},
    {JobStatus::kCompleted, "completed"},
    {JobStatus::kFailed, "failed"},
    {JobStatus::kStopped, "stopped"},
}};

constexpr EnumNames<TargetStatus, 6> kTargetNames{{
    {TargetStatus::kPending, "pending"},
    {TargetStatus::kRunning, "running"},
    {TargetStatus::kDone, "done"},
    {TargetStatus::kFailed, "failed"},
    {TargetStatus::kStopped, "stopped"},
    {TargetStatus::kSkipped, "skipped"},
}};

constexpr EnumNames<TargetVerdict, 3> kVerdictNames{{
    {TargetVerdict::kNone, ""},
    {TargetVerdict::kWinner, "winner"},
    {TargetVerdict::kNoWinner, "no winner"},
}};

}  // namespace

std::string job_status_name(JobStatus status) { return enum_name(kJobNames, status); }
std::string target_status_name(TargetStatus status) { return enum_name(kTargetNames, status); }
std::string target_verdict_name(TargetVerdict verdict) { return enum_name(kVerdictNames, verdict); }

JobStatus job_status_from_name(std::string_view name) { return enum_from_name(kJobNames, name, "job status"); }
TargetStatus target_status_from_name(std::string_view name) {
  return enum_from_name(kTargetNames, name, "target status");
}
TargetVerdict target_verdict_from_name(std::string_view name) {
  return enum_from_name(kVerdictNames, name, "target verdict");
}

}  // namespace maxcode
