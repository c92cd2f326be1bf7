// GitHub's rate-limit rules, in one place, read by the client that waits within a
// request (github_client.cc), by GithubError::retryable and by the service that defers
// work instead (bot/service/app/github_retry.cc):
// https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#exceeding-the-rate-limit
//
//   a 403 or 429 with retry-after            wait that many seconds (a secondary limit)
//   ... with x-ratelimit-remaining 0 and a   wait until x-ratelimit-reset (the primary limit)
//       reset time
//   a 429, or a 403 whose message says        wait at least a minute, backing off (a secondary
//   "rate limit", saying neither              limit that does not say how long)
//   anything else                             not a rate limit (a 403 of a permission)
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace maxcode::bot {

using HttpHeaders = std::multimap<std::string, std::string>;  // names lowercased

// The header's value, or "" when the answer had none.
std::string header_text(const HttpHeaders& headers, const std::string& lowercase_name);
// The header as a number (seconds), when it is one.
std::optional<double> header_number(const HttpHeaders& headers, const std::string& lowercase_name);

struct RateLimit {
  enum class Kind { kNone, kRetryAfter, kReset, kUnstated };
  Kind kind = Kind::kNone;
  double retry_after_s = 0;   // kRetryAfter
  std::int64_t reset_at = 0;  // kReset: x-ratelimit-reset, seconds since the epoch
  std::string stated;         // the header's own text (retry-after or x-ratelimit-reset)

  bool limited() const { return kind != Kind::kNone; }
  // How long to wait from `now_s`: retry-after; until the reset, +1 (the reset is whole
  // seconds and GitHub counts the second it names), at least 1 s; else `unstated_s`.
  double wait_s(double now_s, double unstated_s) const;
  // "secondary rate limit, retry-after 30", "primary rate limit exhausted until
  // x-ratelimit-reset 1764470000", "rate limit without retry-after".
  std::string why() const;
};

// What GitHub's answer says of its rate limits; `message` is GitHub's message (or the
// body that holds it).
RateLimit rate_limit_of(int status, const HttpHeaders& headers, std::string_view message);

// The reset of a primary limit this answer used up (x-ratelimit-remaining 0), also on
// an answer that succeeded: the next request would be refused until then.
std::optional<std::int64_t> exhausted_until(const HttpHeaders& headers);

}  // namespace maxcode::bot
