// The states job.json records (docs/job.md): the job's status, each target's status and,
// once a target is done, its verdict. job.json, the job's report and the service hold
// them by name; the code compares the enums.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

namespace maxcode {

// running -> completed, failed (nothing searched) or stopped (resumable).
enum class JobStatus { kRunning, kCompleted, kFailed, kStopped };
// Every status, in the order above.
inline constexpr JobStatus kJobStatuses[] = {JobStatus::kRunning, JobStatus::kCompleted, JobStatus::kFailed,
                                             JobStatus::kStopped};

// pending -> running -> done, failed, stopped (resumable) or skipped (no budget left).
enum class TargetStatus { kPending, kRunning, kDone, kFailed, kStopped, kSkipped };
inline constexpr TargetStatus kTargetStatuses[] = {TargetStatus::kPending, TargetStatus::kRunning,
                                                   TargetStatus::kDone,    TargetStatus::kFailed,
                                                   TargetStatus::kStopped, TargetStatus::kSkipped};

// With TargetStatus::kDone: a winner or none; kNone (named "") before.
enum class TargetVerdict { kNone, kWinner, kNoWinner };
inline constexpr TargetVerdict kTargetVerdicts[] = {TargetVerdict::kNone, TargetVerdict::kWinner,
                                                    TargetVerdict::kNoWinner};

// "running", "completed", "failed", "stopped".
std::string job_status_name(JobStatus status);
// "pending", "running", "done", "failed", "stopped", "skipped".
std::string target_status_name(TargetStatus status);
// "", "winner", "no winner".
std::string target_verdict_name(TargetVerdict verdict);
// The value of that name; each throws std::invalid_argument naming a name that is none.
JobStatus job_status_from_name(std::string_view name);
TargetStatus target_status_from_name(std::string_view name);
TargetVerdict target_verdict_from_name(std::string_view name);

// Printed by name in test failures and logs.
inline std::ostream& operator<<(std::ostream& out, JobStatus status) { return out << job_status_name(status); }
inline std::ostream& operator<<(std::ostream& out, TargetStatus status) { return out << target_status_name(status); }
inline std::ostream& operator<<(std::ostream& out, TargetVerdict verdict) {
  return out << target_verdict_name(verdict);
}

}  // namespace maxcode
