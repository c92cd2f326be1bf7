#include "bot/service/queue/job_state.h"

#include <array>
#include <stdexcept>
#include <utility>

namespace maxcode::bot::service {

namespace {

constexpr std::array<std::pair<JobState, std::string_view>, 6> kNames{{
    {JobState::kQueued, "queued"},
    {JobState::kRunning, "running"},
    {JobState::kDelivering, "delivering"},
    {JobState::kDone, "done"},
    {JobState::kFailed, "failed"},
    {JobState::kCancelled, "cancelled"},
}};

}  // namespace

std::string job_state_name(JobState state) {
  for (const auto& [s, name] : kNames)
    if (s == state) return std::string(name);
  return "unknown";
}

JobState job_state_from_name(std::string_view name) {
  for (const auto& [s, known] : kNames)
    if (known == name) return s;
  throw std::invalid_argument("unknown job state '" + std::string(name.substr(0, 40)) + "'");
}

}  // namespace maxcode::bot::service
