#include "runner/job/job_status.h"

#include <array>
#include <stdexcept>
#include <utility>

namespace maxcode {

namespace {

constexpr std::array<std::pair<JobStatus, std::string_view>, 4> kJobNames{{
    {JobStatus::kRunning, "running"},
    {JobStatus::kCompleted, "completed"},
    {JobStatus::kFailed, "failed"},
    {JobStatus::kStopped, "stopped"},
}};

constexpr std::array<std::pair<TargetStatus, std::string_view>, 6> kTargetNames{{
    {TargetStatus::kPending, "pending"},
    {TargetStatus::kRunning, "running"},
    {TargetStatus::kDone, "done"},
    {TargetStatus::kFailed, "failed"},
    {TargetStatus::kStopped, "stopped"},
    {TargetStatus::kSkipped, "skipped"},
}};

constexpr std::array<std::pair<TargetVerdict, std::string_view>, 3> kVerdictNames{{
    {TargetVerdict::kNone, ""},
    {TargetVerdict::kWinner, "winner"},
    {TargetVerdict::kNoWinner, "no winner"},
}};

template <class Enum, std::size_t N>
std::string name_of(const std::array<std::pair<Enum, std::string_view>, N>& names, Enum value) {
  for (const auto& [v, name] : names)
    if (v == value) return std::string(name);
  return "unknown";
}

template <class Enum, std::size_t N>
Enum value_of(const std::array<std::pair<Enum, std::string_view>, N>& names, std::string_view name, const char* what) {
  for (const auto& [v, known] : names)
    if (known == name) return v;
  throw std::invalid_argument("unknown " + std::string(what) + " '" + std::string(name.substr(0, 40)) + "'");
}

}  // namespace

std::string job_status_name(JobStatus status) { return name_of(kJobNames, status); }
std::string target_status_name(TargetStatus status) { return name_of(kTargetNames, status); }
std::string target_verdict_name(TargetVerdict verdict) { return name_of(kVerdictNames, verdict); }

JobStatus job_status_from_name(std::string_view name) { return value_of(kJobNames, name, "job status"); }
TargetStatus target_status_from_name(std::string_view name) { return value_of(kTargetNames, name, "target status"); }
TargetVerdict target_verdict_from_name(std::string_view name) {
  return value_of(kVerdictNames, name, "target verdict");
}

}  // namespace maxcode
