// A job as a runner receives it from the service's claim (runner_protocol.h), read into
// a typed value before anything acts on it.
//
// The runner acts on this reply: it fetches `source.url`, checks out `source.commit`
// and writes `document` as the job input. A reply that is not what the protocol says
// (a proxy's error page, a service of another version, a bug) must end as a clear
// error, never as an uncaught json exception that kills a runner with a job in hand,
// and never reach a shell or a path unchecked (a commit is 40 or 64 hex digits).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace maxcode::bot::worker {

struct ClaimedJob {
  std::int64_t id = 0;
  std::string lease;
  int attempt = 0;
  nlohmann::json document;  // the job input of `maxcode run --job`, an object
  std::string url, token, commit;  // source: where to fetch, the read-only token, at what
};

// What a claim's `job` held: the job, or why it cannot run ("job.source.commit: expected
// 40 or 64 hex digits, got \"$(reboot)\""). `id` and `lease` are kept whenever they were
// readable, so that a malformed job can still be reported to the service as failed.
struct ClaimReading {
  std::optional<ClaimedJob> job;
  std::string error;
  std::int64_t id = 0;
  std::string lease;
};

ClaimReading read_claimed_job(const nlohmann::json& job);

}  // namespace maxcode::bot::worker
