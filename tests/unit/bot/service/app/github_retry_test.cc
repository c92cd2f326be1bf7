// GitHub saying "not now": how long the service waits (retry-after, an exhausted primary
// limit's x-ratelimit-reset, backoff for 5xx, capped at github.max_retry_wait_s), what
// is not retried (a permission, a 404), the durable store of deferred work (it survives
// a restart; due only when its time has come) and giving up after github.max_tries.
// The headers come from real answers of the local GitHub, through GithubClient.
#include "bot/service/app/github_retry.h"

#include <gtest/gtest.h>

#include "bot/github/git_remote.h"
#include "bot/github/github_client.h"
#include "bot/github/token_source.h"
#include "bot/service/service_context.h"
#include "support/github_api.h"
#include "support/test_support.h"

namespace maxcode::bot::service {
namespace {

using nlohmann::json;

GithubError error(int status, const std::string& message, std::multimap<std::string, std::string> headers) {
  GithubError e("GitHub API GET /x: " + std::to_string(status) + " " + message, status, message);
  e.headers = std::move(headers);
  return e;
}

TEST(GithubRetry, WaitsAsGithubAsksCappedAndBacksOffOnServerErrors) {
  const RetryLimits limits;  // 900 s cap, 8 tries, 30 s backoff
  const double now = 1'800'000'000;

  auto a = advise_retry(error(429, "You have exceeded a secondary rate limit", {{"retry-after", "30"}}), 1, now, limits);
  EXPECT_TRUE(a.retry);
  EXPECT_EQ(a.wait_s, 30);
  EXPECT_EQ(a.status, "429");
  a = advise_retry(error(403, "You have exceeded a secondary rate limit", {{"retry-after", "7200"}}), 1, now, limits);
  EXPECT_TRUE(a.retry);
  EXPECT_EQ(a.wait_s, 900) << "capped at max_wait_s";
  EXPECT_NE(a.why.find("capped"), std::string::npos) << a.why;
  // Primary limit: until x-ratelimit-reset (and the second it names).
  a = advise_retry(error(403, "API rate limit exceeded", {{"x-ratelimit-remaining", "0"}, {"x-ratelimit-reset", "1800000120"}}),
                   1, now, limits);
  EXPECT_TRUE(a.retry);
  EXPECT_EQ(a.wait_s, 121);
  // A secondary limit without retry-after: at least a minute, as GitHub asks.
  a = advise_retry(error(403, "You have exceeded a secondary rate limit", {}), 1, now, limits);
  EXPECT_TRUE(a.retry);
  EXPECT_EQ(a.wait_s, 60);
  // Server errors and no answer: backoff doubling per try.
  EXPECT_EQ(advise_retry(error(502, "Server Error", {}), 1, now, limits).wait_s, 30);
  EXPECT_EQ(advise_retry(error(502, "Server Error", {}), 3, now, limits).wait_s, 120);
  EXPECT_EQ(advise_retry(error(0, "", {}), 2, now, limits).wait_s, 60);
  EXPECT_EQ(advise_retry(error(503, "", {}), 10, now, limits).wait_s, 900);
  EXPECT_TRUE(advise_retry(GitError("push failed: 502"), 1, now, limits).retry);
  // Not to be retried: a permission, a missing thing, a validation error, our own bugs.
  EXPECT_FALSE(advise_retry(error(403, "Resource not accessible by integration", {}), 1, now, limits).retry);
  EXPECT_FALSE(advise_retry(error(404, "Not Found", {}), 1, now, limits).retry);
  EXPECT_FALSE(advise_retry(error(422, "Validation Failed", {}), 1, now, limits).retry);
  EXPECT_FALSE(advise_retry(std::runtime_error("bad"), 1, now, limits).retry);
}

// The decision is the error's own flag (Error::retryable); GitHub's headers only say how
// long. A GithubError wrapped with context keeps both.
TEST(GithubRetry, DecidesByTheErrorsRetryableFlagThroughWrapping) {
  const RetryLimits limits;
  const double now = 1'800'000'000;
  EXPECT_TRUE(error(429, "", {}).retryable());
  EXPECT_TRUE(error(403, "", {{"retry-after", "5"}}).retryable());
  EXPECT_TRUE(error(403, "", {{"x-ratelimit-remaining", "0"}, {"x-ratelimit-reset", "1800000120"}}).retryable());
  EXPECT_FALSE(error(403, "", {{"x-ratelimit-remaining", "0"}}).retryable()) << "no reset time: a permission";
  EXPECT_TRUE(error(0, "", {}).retryable());
  EXPECT_TRUE(error(500, "", {}).retryable());
  EXPECT_FALSE(error(401, "Bad credentials", {}).retryable());
  EXPECT_TRUE(GitError("push failed").retryable());

  const Error wrapped("delivering job 7", error(403, "", {{"retry-after", "45"}}));
  const auto a = advise_retry(wrapped, 1, now, limits);
  EXPECT_TRUE(a.retry);
  EXPECT_EQ(a.wait_s, 45);
  EXPECT_EQ(a.status, "403");
  const auto denied = advise_retry(Error("delivering job 8", error(404, "Not Found", {})), 1, now, limits);
  EXPECT_FALSE(denied.retry);
  EXPECT_EQ(denied.why, "GitHub answered 404");
  // Another maxcode error that says it may pass: the same backoff as git.
  const auto other = advise_retry(Error("busy", Retryable::kYes), 2, now, limits);
  EXPECT_TRUE(other.retry);
  EXPECT_EQ(other.wait_s, 60);
  EXPECT_FALSE(advise_retry(Error("bad config"), 1, now, limits).retry);
}

// The client as the service sets it up (no waiting on a worker thread) hands the
// answer's headers on in the error.
TEST(GithubRetry, TheClientPassesGithubsHeadersOn) {
  std::string why;
  testing::FakeGithub* github = testing::FakeGithub::get(&why);
  if (!github) GTEST_SKIP() << why;
  github->reset();
  github->setup({{"repos", {{{"owner", "acme"}, {"name", "histo"}}}},
                 {"tokens", {{{"token", "ghp_test"}, {"login", "alice"}, {"permissions", {{"metadata", "read"}}}}}}});
  ClientOptions options;
  options.api_url = github->url();
  options.max_wait_s = 0;
  GithubClient client(options, std::make_shared<StaticToken>("ghp_test"));
  const double now = static_cast<double>(std::time(nullptr));

  github->fail({{"kind", "secondary"}, {"status", 429}, {"retry_after", 3}});
  try {
    client.get("/repos/acme/histo");
    FAIL() << "a 429 must throw when the caller does not wait";
  } catch (const GithubError& e) {
    EXPECT_EQ(e.status, 429);
    const RetryAdvice a = advise_retry(e, 1, now, RetryLimits{});
    EXPECT_TRUE(a.retry);
    EXPECT_EQ(a.wait_s, 3);
  }
  github->fail({{"kind", "primary"}, {"reset_in", 50}});
  try {
    client.get("/repos/acme/histo");
    FAIL() << "an exhausted primary limit must throw when the caller does not wait";
  } catch (const GithubError& e) {
    EXPECT_EQ(e.status, 403);
    const RetryAdvice a = advise_retry(e, 1, now, RetryLimits{});
    EXPECT_TRUE(a.retry);
    EXPECT_NEAR(a.wait_s, 51, 3);
  }
  github->fail({{"kind", "403"}});
  try {
    client.get("/repos/acme/histo");
    FAIL();
  } catch (const GithubError& e) {
    EXPECT_FALSE(advise_retry(e, 1, now, RetryLimits{}).retry) << "a missing permission does not pass with time";
  }
  EXPECT_EQ(client.get("/repos/acme/histo")["full_name"], "acme/histo");
  github->check_clean();
}

TEST(GithubRetry, DeferredWorkIsDurableAndDueOnlyWhenItsTimeHasCome) {
  testing::TempDir dir;
  double now = 1000;
  {
    DeferredWork work(dir / "store.sqlite", [&] { return now; });
    work.add("regressions", "7");
    EXPECT_EQ(work.due("regressions").size(), 1u);  // to do at once
    EXPECT_EQ(work.failed("deliver", "3", 30, "429 secondary rate limit"), 1);
    EXPECT_TRUE(work.waiting("deliver", "3"));
    EXPECT_TRUE(work.due("deliver").empty());
    now += 29;
    EXPECT_TRUE(work.due("deliver").empty());
    now += 2;
    ASSERT_EQ(work.due("deliver").size(), 1u);
    EXPECT_FALSE(work.waiting("deliver", "3"));
    EXPECT_EQ(work.failed("deliver", "3", 60, "502"), 2);
  }
  // A restart (kill -9 between): the same store holds the same work.
  DeferredWork again(dir / "store.sqlite", [&] { return now; });
  const auto item = again.find("deliver", "3");
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(item->tries, 2);
  EXPECT_EQ(item->error, "502");
  EXPECT_DOUBLE_EQ(item->not_before, now + 60);
  EXPECT_EQ(again.due("regressions").size(), 1u);
  again.remove("deliver", "3");
  EXPECT_FALSE(again.find("deliver", "3").has_value());
  EXPECT_EQ(again.tries("deliver", "3"), 0);

  // Replicas sharing the store: take_due hands an item to one of them, held for the
  // hold; it is not "waiting" meanwhile (report_job would skip it), and another replica
  // (here a second connection) gets it only once the hold runs out.
  DeferredWork other(dir / "store.sqlite", [&] { return now; });
  ASSERT_EQ(again.take_due("regressions", 60).size(), 1u);
  EXPECT_FALSE(again.waiting("regressions", "7"));
  EXPECT_TRUE(other.take_due("regressions", 60).empty());
  now += 61;  // the replica that took it died
  EXPECT_EQ(other.take_due("regressions", 60).size(), 1u);
}

TEST(GithubRetry, GivesUpAfterMaxTriesWithALogLine) {
  testing::TempDir dir;
  double now = 5000;
  ServiceConfig config = parse_service_config({{"github", {{"max_tries", 3}, {"max_retry_wait_s", 40}}}}, "service.json");
  QueueOptions options;
  options.now = [&now] { return now; };
  JobQueue queue(dir / "q.sqlite", options);
  DeferredWork work(dir / "q.sqlite", [&] { return now; });
  Metrics metrics;
  std::vector<std::string> lines;
  ServiceLog log([&](const std::string& line) { lines.push_back(line); });
  GithubAccess access(config, metrics, log);
  ServiceContext context{config, queue, metrics, access, log, dir.path(), nullptr, nullptr};
  context.deferred = &work;

  const GithubError limited = error(429, "secondary rate limit", {{"retry-after", "600"}});
  EXPECT_TRUE(defer_after_failure(context, "report", "12", limited));
  EXPECT_EQ(work.find("report", "12")->not_before, now + 40) << "capped by github.max_retry_wait_s";
  EXPECT_TRUE(defer_after_failure(context, "report", "12", limited));
  EXPECT_FALSE(defer_after_failure(context, "report", "12", limited)) << "the third try is the last";
  EXPECT_FALSE(work.find("report", "12").has_value());
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.back().find("report 12: GIVEN UP after 3 tries"), std::string::npos) << lines.back();
  const std::string text = metrics.text();
  EXPECT_NE(text.find("maxcode_github_deferred_total{action=\"report\",status=\"429\"} 2"), std::string::npos) << text;
  EXPECT_NE(text.find("maxcode_github_gave_up_total{action=\"report\"} 1"), std::string::npos) << text;
  // Not a failure that passes: not deferred, nothing left behind.
  EXPECT_FALSE(defer_after_failure(context, "report", "13", error(404, "Not Found", {})));
  EXPECT_FALSE(work.find("report", "13").has_value());
}

}  // namespace
}  // namespace maxcode::bot::service
