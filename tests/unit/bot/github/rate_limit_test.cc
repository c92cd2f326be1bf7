// GitHub's rate-limit rules, as the client, GithubError::retryable and the service's
// deferral all read them (bot/github/rate_limit.h).
#include <gtest/gtest.h>

#include "bot/github/github_client.h"
#include "bot/github/rate_limit.h"

namespace maxcode::bot {
namespace {

using Kind = RateLimit::Kind;

TEST(RateLimit, RetryAfterIsASecondaryLimitThatSaysHowLong) {
  const RateLimit limit = rate_limit_of(403, {{"retry-after", "30"}}, "You have exceeded a secondary rate limit");
  EXPECT_EQ(limit.kind, Kind::kRetryAfter);
  EXPECT_DOUBLE_EQ(limit.wait_s(1000, 60), 30);
  EXPECT_EQ(limit.why(), "secondary rate limit, retry-after 30");
  // retry-after wins over an exhausted primary limit in the same answer.
  EXPECT_EQ(
      rate_limit_of(429, {{"retry-after", "5"}, {"x-ratelimit-remaining", "0"}, {"x-ratelimit-reset", "2000"}}, "")
          .kind,
      Kind::kRetryAfter);
}

TEST(RateLimit, AnExhaustedPrimaryLimitWaitsPastItsReset) {
  const HttpHeaders headers{{"x-ratelimit-remaining", "0"}, {"x-ratelimit-reset", "1010"}};
  const RateLimit limit = rate_limit_of(403, headers, "API rate limit exceeded for installation ID 1");
  EXPECT_EQ(limit.kind, Kind::kReset);
  EXPECT_DOUBLE_EQ(limit.wait_s(1000, 60), 11);  // the second it names counts
  EXPECT_DOUBLE_EQ(limit.wait_s(5000, 60), 1);   // a reset already past: a second
  EXPECT_EQ(limit.why(), "primary rate limit exhausted until x-ratelimit-reset 1010");
  // A successful answer that used the last request says when the next one may go.
  EXPECT_EQ(exhausted_until(headers), std::optional<std::int64_t>(1010));
  EXPECT_EQ(exhausted_until({{"x-ratelimit-remaining", "1"}, {"x-ratelimit-reset", "1010"}}), std::nullopt);
  EXPECT_EQ(rate_limit_of(200, headers, "").kind, Kind::kNone);
}

TEST(RateLimit, ALimitThatSaysNoTimeWaitsTheCallersMinimum) {
  for (const auto& [status, headers, message] : std::vector<std::tuple<int, HttpHeaders, std::string>>{
           {429, {}, ""},
           {403, {{"x-ratelimit-remaining", "0"}}, "API rate limit exceeded"},  // no reset
           {403, {{"retry-after", "soon"}}, "secondary rate limit"}}) {         // not a number
    const RateLimit limit = rate_limit_of(status, headers, message);
    EXPECT_EQ(limit.kind, Kind::kUnstated) << status << " " << message;
    EXPECT_DOUBLE_EQ(limit.wait_s(1000, 60), 60);
    EXPECT_EQ(limit.why(), "rate limit without retry-after");
  }
}

TEST(RateLimit, AForbiddenThatIsNotALimitIsNotRetried) {
  EXPECT_EQ(rate_limit_of(403, {}, "Resource not accessible by integration").kind, Kind::kNone);
  EXPECT_EQ(rate_limit_of(403, {{"retry-after", "soon"}}, "Must have admin rights").kind, Kind::kNone);
  EXPECT_EQ(rate_limit_of(404, {{"retry-after", "30"}}, "Not Found").kind, Kind::kNone);

  // GithubError reads the same rules: retryable exactly when limited, a 5xx or no answer.
  GithubError forbidden("403 Resource not accessible by integration", 403, "Resource not accessible by integration");
  EXPECT_FALSE(forbidden.retryable());
  GithubError limited("403 API rate limit exceeded", 403, "API rate limit exceeded");
  EXPECT_TRUE(limited.retryable());
  EXPECT_EQ(limited.rate_limit().kind, Kind::kUnstated);
  GithubError timed("403", 403);
  timed.headers = {{"retry-after", "7"}};
  EXPECT_TRUE(timed.retryable());
  EXPECT_EQ(timed.rate_limit().wait_s(0, 60), 7);
  EXPECT_TRUE(GithubError("502 Bad Gateway", 502).retryable());
  EXPECT_TRUE(GithubError("no response", 0).retryable());
  EXPECT_FALSE(GithubError("422 Validation Failed", 422).retryable());
}

}  // namespace
}  // namespace maxcode::bot
