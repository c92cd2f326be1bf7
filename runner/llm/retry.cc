#include "runner/llm/retry.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <ctime>

#include "runner/util/text.h"

namespace maxcode::llm {
namespace {

// RFC 9110's optional whitespace around a field value.
constexpr std::string_view kHeaderBlanks = " \t";

constexpr double kBackoffBaseS = 0.5;
constexpr double kBackoffCapS = 30;

// A non-negative decimal number and nothing else.
std::optional<double> number(const std::string& text) {
  std::string value(trim(text, kHeaderBlanks));
  if (value.empty() || !std::isdigit(static_cast<unsigned char>(value.front()))) {
    return std::nullopt;
  }
  char* end = nullptr;
  double parsed = std::strtod(value.c_str(), &end);
  if (end != value.c_str() + value.size() || !std::isfinite(parsed)) return std::nullopt;
  return parsed;
}

// "Wed, 21 Oct 2015 07:28:00 GMT" (RFC 9110's IMF-fixdate), as seconds since the epoch.
std::optional<std::time_t> http_date(const std::string& text) {
  std::tm parts{};
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &parts);
  if (!end || *end != '\0') return std::nullopt;
  return timegm(&parts);
}

}  // namespace

bool retryable_status(int status) {
  return status == 408 || status == 409 || status == 429 || (status >= 500 && status <= 599);
}

std::optional<double> requested_wait_s(const std::string& retry_after_ms,
                                       const std::string& retry_after,
                                       std::chrono::system_clock::time_point now) {
  if (auto ms = number(retry_after_ms)) return *ms / 1000;
  if (auto seconds = number(retry_after)) return *seconds;
  if (auto date = http_date(std::string(trim(retry_after, kHeaderBlanks)))) {
    auto then = std::chrono::system_clock::from_time_t(*date);
    return std::max(0.0, std::chrono::duration<double>(then - now).count());
  }
  return std::nullopt;
}

double backoff_s(int retry, std::mt19937_64& random) {
  double ceiling = std::min(kBackoffCapS, kBackoffBaseS * std::exp2(std::max(0, retry - 1)));
  return std::uniform_real_distribution<double>(ceiling / 2, ceiling)(random);
}

}  // namespace maxcode::llm
