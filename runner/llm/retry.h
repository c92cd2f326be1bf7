// When to try an HTTP call again, and how long to wait first.
#pragma once

#include <chrono>
#include <optional>
#include <random>
#include <string>

namespace maxcode::llm {

// Statuses worth another attempt: rate limits (429), request timeouts and conflicts
// (408, 409, which OpenAI's SDKs retry too), server errors including Anthropic's
// 529 "overloaded".
bool retryable_status(int status);

// The wait the server asked for, in seconds: `retry-after-ms` (OpenAI) wins over
// `retry-after`, which holds seconds or an HTTP date. nullopt when neither is usable.
std::optional<double> requested_wait_s(const std::string& retry_after_ms,
                                       const std::string& retry_after,
                                       std::chrono::system_clock::time_point now);

// Jittered exponential backoff before retry number `retry` (1 for the first): a random
// point in the upper half of min(30 s, 0.5 s * 2^(retry-1)), so that clients that failed
// together do not come back together, yet each still waits a while.
double backoff_s(int retry, std::mt19937_64& random);

}  // namespace maxcode::llm
