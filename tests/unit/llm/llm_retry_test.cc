// Retries, backoff, rate limits, connection failures, TLS verification and the cap on
// concurrent calls, against local servers; plus the pure helpers behind them.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <string>
#include <vector>

#include "runner/llm/provider.h"
#include "runner/llm/redact.h"
#include "runner/llm/retry.h"
#include "support/llm_server.h"

namespace maxcode::llm {
namespace {

using maxcode::testing::fixture_reply;
using maxcode::testing::LlmServer;
using maxcode::testing::ScriptedReply;
using Clock = std::chrono::steady_clock;

constexpr const char* kKeyEnv = "MAXCODE_TEST_RETRY_KEY";
constexpr const char* kPath = "/v1/chat/completions";

ProviderConfig config_for(const std::string& url) {
  ProviderConfig config;
  config.provider = "openai";
  config.model = "gpt-4.1";
  config.base_url = url + "/v1";
  config.api_key_env = kKeyEnv;
  config.api_key = "sk-test-retry-0123456789";  // as the CLI's environment would give it
  config.timeout_s = 5;
  return config;
}

Request sample_request() {
  Request request;
  request.purpose = "propose";
  request.messages = {{"user", "Make it faster."}};
  return request;
}

ScriptedReply rate_limited(std::vector<std::pair<std::string, std::string>> headers) {
  ScriptedReply reply = fixture_reply("openai_error_429.json", 429);
  reply.headers = std::move(headers);
  return reply;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

template <class Call>
std::string expect_error(ErrorKind kind, Call&& call) {
  try {
    call();
  } catch (const LlmError& error) {
    EXPECT_EQ(error_kind_name(error.kind()), std::string(error_kind_name(kind))) << error.what();
    return error.what();
  }
  ADD_FAILURE() << "expected an LlmError of kind " << error_kind_name(kind);
  return "";
}

class LlmRetryTest : public ::testing::Test {
 protected:
  LlmServer server;
};

TEST_F(LlmRetryTest, ARateLimitStormIsWaitedOutAsTheServerAsks) {
  server.script(kPath, {rate_limited({{"retry-after", "1"}}),
                        rate_limited({{"retry-after-ms", "50"}, {"retry-after", "30"}}),
                        rate_limited({{"retry-after-ms", "50"}}),
                        fixture_reply("openai_chat_completion.json")});
  ProviderConfig config = config_for(server.url());
  config.max_retries = 4;
  auto start = Clock::now();
  Reply reply = make_provider(config)->complete(sample_request());
  double elapsed = seconds_since(start);

  EXPECT_EQ(reply.attempts, 4);
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 4u);
  auto gap = [&](int i) {
    return std::chrono::duration<double>(requests[i + 1].received - requests[i].received).count();
  };
  EXPECT_GE(gap(0), 1.0) << "retry-after: 1 was not honoured";
  // retry-after-ms wins over retry-after (which says 30 s here).
  EXPECT_GE(gap(1), 0.05);
  EXPECT_LT(gap(1), 0.5);
  EXPECT_LT(elapsed, 2.5);
  EXPECT_EQ(reply.finish_reason, "stop");
}

TEST_F(LlmRetryTest, RateLimitedForeverEndsAsRateLimited) {
  server.script(kPath, {rate_limited({{"retry-after", "0"}})});
  ProviderConfig config = config_for(server.url());
  config.max_retries = 3;
  std::string message = expect_error(ErrorKind::kRateLimited, [&] {
    make_provider(config)->complete(sample_request());
  });
  EXPECT_EQ(server.requests().size(), 4u);
  EXPECT_NE(message.find("HTTP 429 (rate limited)"), std::string::npos) << message;
  EXPECT_NE(message.find("Rate limit reached for gpt-4.1"), std::string::npos) << message;
  EXPECT_NE(message.find("(after 4 attempts)"), std::string::npos) << message;
}

TEST_F(LlmRetryTest, AWaitLongerThanAMinuteIsNotSatOut) {
  server.script(kPath, {rate_limited({{"retry-after", "3600"}})});
  auto start = Clock::now();
  std::string message = expect_error(ErrorKind::kRateLimited, [&] {
    make_provider(config_for(server.url()))->complete(sample_request());
  });
  EXPECT_LT(seconds_since(start), 1.0);
  EXPECT_NE(message.find("asks to wait 3600 s, more than max_retry_wait_s 60 s"), std::string::npos) << message;
}

// The cap is the config's: 2 s asked is sat out under a cap of 3 s, refused under 1 s.
TEST_F(LlmRetryTest, TheLongestWaitHonouredIsConfigured) {
  ProviderConfig config = config_for(server.url());
  config.max_retry_wait_s = 3;
  server.script(kPath, {rate_limited({{"retry-after", "2"}}), fixture_reply("openai_chat_completion.json")});
  auto start = Clock::now();
  make_provider(config)->complete(sample_request());
  EXPECT_GE(seconds_since(start), 1.9);
  config.max_retry_wait_s = 1;
  server.script(kPath, {rate_limited({{"retry-after", "2"}})});
  const std::string message = expect_error(ErrorKind::kRateLimited, [&] { make_provider(config)->complete(sample_request()); });
  EXPECT_NE(message.find("more than max_retry_wait_s 1 s"), std::string::npos) << message;
}

TEST_F(LlmRetryTest, AServerErrorThenSuccessIsRetriedWithBackoff) {
  server.script(kPath, {fixture_reply("openai_error_500.json", 500),
                        fixture_reply("openai_chat_completion.json")});
  auto start = Clock::now();
  Reply reply = make_provider(config_for(server.url()))->complete(sample_request());
  EXPECT_EQ(reply.attempts, 2);
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  // The first backoff lies in [0.25, 0.5] s.
  double gap = std::chrono::duration<double>(requests[1].received - requests[0].received).count();
  EXPECT_GE(gap, 0.25);
  EXPECT_LT(seconds_since(start), 1.5);
}

TEST_F(LlmRetryTest, ServerErrorsEveryTimeEndAsAServerError) {
  ScriptedReply failing = fixture_reply("openai_error_500.json", 503);
  failing.headers = {{"retry-after-ms", "10"}};
  server.script(kPath, {failing});
  ProviderConfig config = config_for(server.url());
  config.max_retries = 2;
  std::string message = expect_error(ErrorKind::kServer, [&] {
    make_provider(config)->complete(sample_request());
  });
  EXPECT_EQ(server.requests().size(), 3u);
  EXPECT_NE(message.find("HTTP 503: The server had an error"), std::string::npos) << message;
}

TEST(LlmConnection, ARefusedConnectionIsRetriedThenReported) {
  std::string url;
  {
    LlmServer gone;
    url = gone.url();
  }  // nothing listens on its port now
  ProviderConfig config = config_for(url);
  config.max_retries = 1;
  auto start = Clock::now();
  std::string message = expect_error(ErrorKind::kConnection, [&] {
    make_provider(config)->complete(sample_request());
  });
  EXPECT_GE(seconds_since(start), 0.25) << "the retry should come after a backoff";
  EXPECT_NE(message.find("could not connect"), std::string::npos) << message;
  EXPECT_NE(message.find("(after 2 attempts)"), std::string::npos) << message;
}

TEST(LlmConnection, ASelfSignedCertificateIsRefused) {
  LlmServer server(LlmServer::Tls::kSelfSigned);
  server.script(kPath, {fixture_reply("openai_chat_completion.json")});
  ProviderConfig config = config_for(server.url());
  config.max_retries = 3;
  auto start = Clock::now();
  std::string message = expect_error(ErrorKind::kConnection, [&] {
    make_provider(config)->complete(sample_request());
  });
  EXPECT_LT(seconds_since(start), 1.0) << "a bad certificate is not retried";
  EXPECT_NE(message.find("certificate verification failed"), std::string::npos) << message;
  EXPECT_NE(message.find("self-signed"), std::string::npos) << message;
  EXPECT_TRUE(server.requests().empty()) << "no request may reach an unverified server";
}

TEST_F(LlmRetryTest, EightProposalsAgainstAOneSecondServerRunConcurrently) {
  ScriptedReply slow = fixture_reply("openai_chat_completion.json");
  slow.delay_s = 1;
  server.script(kPath, {slow});
  auto provider = make_provider(config_for(server.url()));  // max_concurrency 8
  auto start = Clock::now();
  std::vector<std::future<Reply>> calls;
  for (int i = 0; i < 8; ++i) {
    calls.push_back(std::async(std::launch::async, [&] { return provider->complete(sample_request()); }));
  }
  for (auto& call : calls) EXPECT_FALSE(call.get().text.empty());
  double elapsed = seconds_since(start);
  std::printf("8 proposals against a 1 s server: %.2f s\n", elapsed);
  EXPECT_LT(elapsed, 2.5);
  EXPECT_EQ(server.requests().size(), 8u);
  EXPECT_EQ(server.max_in_flight(), 8);
}

TEST_F(LlmRetryTest, MaxConcurrencyCapsCallsInFlight) {
  ScriptedReply slow = fixture_reply("openai_chat_completion.json");
  slow.delay_s = 0.2;
  server.script(kPath, {slow});
  ProviderConfig config = config_for(server.url());
  config.max_concurrency = 2;
  auto provider = make_provider(config);
  auto start = Clock::now();
  std::vector<std::future<Reply>> calls;
  for (int i = 0; i < 6; ++i) {
    calls.push_back(std::async(std::launch::async, [&] { return provider->complete(sample_request()); }));
  }
  for (auto& call : calls) call.get();
  EXPECT_EQ(server.max_in_flight(), 2);
  EXPECT_GE(seconds_since(start), 0.6);  // three rounds of two
}

TEST(LlmRetryPolicy, RetriesRateLimitsAndServerErrorsOnly) {
  for (int status : {408, 409, 429, 500, 502, 503, 504, 529}) EXPECT_TRUE(retryable_status(status)) << status;
  for (int status : {200, 400, 401, 403, 404, 422}) EXPECT_FALSE(retryable_status(status)) << status;
}

TEST(LlmRetryPolicy, ReadsRetryAfterInEveryForm) {
  auto now = std::chrono::system_clock::from_time_t(1445412480);  // 2015-10-21 07:28:00 UTC
  EXPECT_EQ(requested_wait_s("", "", now), std::nullopt);
  EXPECT_EQ(requested_wait_s("", "2", now), 2.0);
  EXPECT_EQ(requested_wait_s("", " 1.5 ", now), 1.5);
  EXPECT_EQ(requested_wait_s("250", "7", now), 0.25);
  EXPECT_EQ(requested_wait_s("", "Wed, 21 Oct 2015 07:28:30 GMT", now), 30.0);
  EXPECT_EQ(requested_wait_s("", "Wed, 21 Oct 2015 07:27:00 GMT", now), 0.0);
  EXPECT_EQ(requested_wait_s("", "soon", now), std::nullopt);
  EXPECT_EQ(requested_wait_s("", "-3", now), std::nullopt);
  EXPECT_EQ(requested_wait_s("x", "4", now), 4.0);
}

TEST(LlmRetryPolicy, BackoffGrowsWithJitterUpToThirtySeconds) {
  std::mt19937_64 random(7);
  for (int i = 0; i < 100; ++i) {
    double first = backoff_s(1, random);
    EXPECT_GE(first, 0.25);
    EXPECT_LE(first, 0.5);
    double fourth = backoff_s(4, random);
    EXPECT_GE(fourth, 2.0);
    EXPECT_LE(fourth, 4.0);
    double late = backoff_s(40, random);
    EXPECT_GE(late, 15.0);
    EXPECT_LE(late, 30.0);
  }
}

TEST(LlmRedact, RemovesTheKeyAndLongPiecesOfIt) {
  std::string key = "sk-proj-abcdefghijklmnop0123456789";
  EXPECT_EQ(redact("bad key " + key + ".", key), "bad key [redacted].");
  // A masked echo still shows too much of the key.
  EXPECT_EQ(redact("key sk-proj-abcd****6789 and 0123456789", key),
            "key [redacted]****6789 and [redacted]");
  EXPECT_EQ(redact("nothing secret here", key), "nothing secret here");
  EXPECT_EQ(redact("anything", ""), "anything");
}

TEST(LlmRedact, ExcerptsAreOneLineAndCutCleanly) {
  EXPECT_EQ(excerpt("<html>\n  <body>\n</html>\n"), "<html> <body> </html>");
  EXPECT_EQ(excerpt(std::string(300, 'a')), std::string(200, 'a') + "...");
  std::string text = std::string(199, 'a') + "\xc3\xa9";  // 'é' straddles the cut
  EXPECT_EQ(excerpt(text), std::string(199, 'a') + "...");
}

}  // namespace
}  // namespace maxcode::llm
