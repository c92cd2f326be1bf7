// The Anthropic provider against a local server speaking the Messages API.
#include <gtest/gtest.h>

#include <string>

#include "runner/llm/provider.h"
#include "support/llm_server.h"

namespace maxcode::llm {
namespace {

using maxcode::testing::fixture_reply;
using maxcode::testing::LlmServer;
using maxcode::testing::ScriptedReply;
using nlohmann::json;

constexpr const char* kKeyEnv = "MAXCODE_TEST_ANTHROPIC_KEY";
constexpr const char* kKey = "sk-ant-api03-maxcodeTestKey-0123456789abcdef";

ProviderConfig config_for(const LlmServer& server) {
  ProviderConfig config;
  config.provider = "anthropic";
  config.model = "claude-sonnet-4-20250514";
  config.base_url = server.url();
  config.api_key_env = kKeyEnv;
  config.api_key = kKey;  // as the CLI's environment would give it
  config.timeout_s = 5;
  config.max_retries = 0;
  return config;
}

Request sample_request() {
  Request request;
  request.purpose = "critique";
  request.messages = {{"system", "You review CUDA kernels."},
                      {"system", "Answer in two sentences."},
                      {"user", "Why is scale() slow?"},
                      {"assistant", "It reloads a[i]."},
                      {"user", "And how do I fix it?"}};
  return request;
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

class AnthropicProviderTest : public ::testing::Test {
 protected:
  LlmServer server;
};

TEST_F(AnthropicProviderTest, SendsTheDocumentedRequestAndReadsTheReply) {
  server.script("/v1/messages", {fixture_reply("anthropic_message.json")});
  ProviderConfig config = config_for(server);
  config.price = {3.0, 15.0};
  config.max_tokens = 8192;
  config.temperature = 0.5;

  Reply reply = make_provider(config)->complete(sample_request());

  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  const auto& sent = requests[0];
  EXPECT_EQ(sent.method, "POST");
  EXPECT_EQ(sent.path, "/v1/messages");
  EXPECT_EQ(sent.header("x-api-key"), kKey);
  EXPECT_EQ(sent.header("anthropic-version"), "2023-06-01");
  EXPECT_EQ(sent.header("content-type"), "application/json");
  EXPECT_FALSE(sent.has_header("Authorization"));
  json body = sent.json();
  EXPECT_EQ(body["model"], "claude-sonnet-4-20250514");
  EXPECT_EQ(body["max_tokens"], 8192);
  EXPECT_EQ(body["temperature"], 0.5);
  // System prompts go top-level, joined; only user and assistant turns are messages.
  EXPECT_EQ(body["system"], "You review CUDA kernels.\n\nAnswer in two sentences.");
  ASSERT_EQ(body["messages"].size(), 3u);
  EXPECT_EQ(body["messages"][0], (json{{"role", "user"}, {"content", "Why is scale() slow?"}}));
  EXPECT_EQ(body["messages"][1]["role"], "assistant");
  EXPECT_EQ(body["messages"][2]["content"], "And how do I fix it?");

  // The two text blocks, joined.
  EXPECT_EQ(reply.text,
            "The inner loop reloads `a[i]` on every iteration. Hoist it:\n\n```cpp\nvoid "
            "scale(float* a, float s, int n) {\n  for (int i = 0; i < n; ++i) a[i] *= s;\n}\n```");
  EXPECT_EQ(reply.finish_reason, "stop");
  EXPECT_EQ(reply.model, "claude-sonnet-4-20250514");
  EXPECT_EQ(reply.usage.input_tokens, 2095);
  EXPECT_EQ(reply.usage.output_tokens, 503);
  // 2095 * 3 / 1e6 + 503 * 15 / 1e6
  EXPECT_NEAR(reply.usage.cost_usd, 0.006285 + 0.007545, 1e-12);
  EXPECT_EQ(reply.attempts, 1);
}

TEST_F(AnthropicProviderTest, APathPrefixInTheBaseUrlIsKept) {
  server.script("/gateway/anthropic/v1/messages", {fixture_reply("anthropic_message.json")});
  ProviderConfig config = config_for(server);
  config.base_url = server.url() + "/gateway/anthropic/";
  config.anthropic_version = "2024-10-22";
  make_provider(config)->complete(sample_request());
  EXPECT_EQ(server.requests().at(0).path, "/gateway/anthropic/v1/messages");
  EXPECT_EQ(server.requests().at(0).header("anthropic-version"), "2024-10-22");
}

TEST_F(AnthropicProviderTest, MaxTokensBecomesFinishReasonLength) {
  server.script("/v1/messages", {fixture_reply("anthropic_max_tokens.json")});
  Reply reply = make_provider(config_for(server))->complete(sample_request());
  EXPECT_EQ(reply.finish_reason, "length");
  EXPECT_EQ(reply.usage.output_tokens, 16);
}

TEST_F(AnthropicProviderTest, RefusalIsReportedAsSuch) {
  server.script("/v1/messages", {fixture_reply("anthropic_refusal.json")});
  std::string message = expect_error(ErrorKind::kRefusal, [&] {
    make_provider(config_for(server))->complete(sample_request());
  });
  EXPECT_NE(message.find("critique: anthropic"), std::string::npos) << message;
}

TEST_F(AnthropicProviderTest, OverloadedIsRetried) {
  ScriptedReply overloaded = fixture_reply("anthropic_error_529.json", 529);
  overloaded.headers = {{"retry-after", "0"}};
  server.script("/v1/messages", {overloaded, fixture_reply("anthropic_message.json")});
  ProviderConfig config = config_for(server);
  config.max_retries = 2;
  Reply reply = make_provider(config)->complete(sample_request());
  EXPECT_EQ(reply.attempts, 2);
  EXPECT_EQ(server.requests().size(), 2u);
}

TEST_F(AnthropicProviderTest, OverloadedEveryTimeIsAServerError) {
  ScriptedReply overloaded = fixture_reply("anthropic_error_529.json", 529);
  overloaded.headers = {{"retry-after", "0"}};
  server.script("/v1/messages", {overloaded});
  ProviderConfig config = config_for(server);
  config.max_retries = 2;
  std::string message = expect_error(ErrorKind::kServer, [&] {
    make_provider(config)->complete(sample_request());
  });
  EXPECT_NE(message.find("HTTP 529: Overloaded [overloaded_error] (after 3 attempts)"),
            std::string::npos)
      << message;
  EXPECT_EQ(server.requests().size(), 3u);
}

TEST_F(AnthropicProviderTest, WrongKeyIsAnAuthErrorThatNamesTheVariableAndHidesTheKey) {
  server.script("/v1/messages", {fixture_reply("anthropic_error_401.json", 401)});
  std::string message = expect_error(ErrorKind::kAuth, [&] {
    make_provider(config_for(server))->complete(sample_request());
  });
  EXPECT_NE(message.find("invalid x-api-key [authentication_error]"), std::string::npos) << message;
  EXPECT_NE(message.find(std::string("check ") + kKeyEnv), std::string::npos) << message;
  EXPECT_EQ(message.find(kKey), std::string::npos) << message;
}

TEST_F(AnthropicProviderTest, AnHtmlErrorPageIsReportedAsNotJson) {
  ScriptedReply page;
  page.status = 502;
  page.body = maxcode::testing::llm_fixture("error_page.html");
  page.content_type = "text/html";
  page.headers = {{"retry-after", "0"}};
  server.script("/v1/messages", {page});
  std::string message = expect_error(ErrorKind::kServer, [&] {
    make_provider(config_for(server))->complete(sample_request());
  });
  EXPECT_NE(message.find("HTTP 502: expected JSON, got text/html: <html> <head><title>502 Bad Gateway"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace maxcode::llm
