#include "bot/github/rate_limit.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace maxcode::bot {

std::string header_text(const HttpHeaders& headers, const std::string& lowercase_name) {
  const auto it = headers.find(lowercase_name);
  return it == headers.end() ? std::string() : it->second;
}

std::optional<double> header_number(const HttpHeaders& headers, const std::string& lowercase_name) {
  const std::string text = header_text(headers, lowercase_name);
  if (text.empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used != text.size() || !std::isfinite(v)) return std::nullopt;
    return v;
  } catch (...) {
    return std::nullopt;
  }
}

std::optional<std::int64_t> exhausted_until(const HttpHeaders& headers) {
  if (header_text(headers, "x-ratelimit-remaining") != "0") return std::nullopt;
  const auto reset = header_number(headers, "x-ratelimit-reset");
  if (!reset) return std::nullopt;
  return static_cast<std::int64_t>(*reset);
}

RateLimit rate_limit_of(int status, const HttpHeaders& headers, std::string_view message) {
  RateLimit limit;
  if (status != 403 && status != 429) return limit;
  if (const auto retry_after = header_number(headers, "retry-after")) {
    limit.kind = RateLimit::Kind::kRetryAfter;
    limit.retry_after_s = std::max(*retry_after, 0.0);
    limit.stated = header_text(headers, "retry-after");
  } else if (const auto reset = exhausted_until(headers)) {
    limit.kind = RateLimit::Kind::kReset;
    limit.reset_at = *reset;
    limit.stated = header_text(headers, "x-ratelimit-reset");
  } else if (status == 429 || message.find("rate limit") != std::string_view::npos) {
    limit.kind = RateLimit::Kind::kUnstated;
  }
  return limit;
}

double RateLimit::wait_s(double now_s, double unstated_s) const {
  switch (kind) {
    case Kind::kRetryAfter:
      return retry_after_s;
    case Kind::kReset:
      return std::max(static_cast<double>(reset_at) - now_s + 1, 1.0);
    case Kind::kUnstated:
      return unstated_s;
    case Kind::kNone:
      break;
  }
  return 0;
}

std::string RateLimit::why() const {
  switch (kind) {
    case Kind::kRetryAfter:
      return "secondary rate limit, retry-after " + stated;
    case Kind::kReset:
      return "primary rate limit exhausted until x-ratelimit-reset " + stated;
    case Kind::kUnstated:
      return "rate limit without retry-after";
    case Kind::kNone:
      break;
  }
  return "not a rate limit";
}

}  // namespace maxcode::bot
