// The OpenAI-compatible provider against a local server speaking the chat-completions
// wire format: request shape, reply parsing, and each way a reply can go wrong.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "runner/llm/provider.h"
#include "support/llm_server.h"

namespace maxcode::llm {
namespace {

using maxcode::testing::fixture_reply;
using maxcode::testing::LlmServer;
using maxcode::testing::ScriptedReply;
using nlohmann::json;

constexpr const char* kKeyEnv = "MAXCODE_TEST_OPENAI_KEY";
// The key the 401 fixture echoes back in full.
constexpr const char* kKey = "sk-proj-maxcodeTestKey0123456789abcdefXYZ";
constexpr const char* kPath = "/v1/chat/completions";

ProviderConfig config_for(const LlmServer& server) {
  ProviderConfig config;
  config.provider = "openai";
  config.model = "gpt-4.1";
  config.base_url = server.url() + "/v1";
  config.api_key_env = kKeyEnv;
  config.api_key = kKey;  // as the CLI's environment would give it
  config.timeout_s = 5;
  config.max_retries = 0;
  return config;
}

Request sample_request() {
  Request request;
  request.purpose = "propose";
  request.messages = {{"system", "You optimize C++ functions."},
                      {"user", "Make total() faster:\nlong total(...)"}};
  return request;
}

// Runs `call`, expecting an LlmError of `kind`; returns its message.
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

class OpenAiProviderTest : public ::testing::Test {
 protected:
  LlmServer server;
};

TEST_F(OpenAiProviderTest, SendsTheDocumentedRequestAndReadsTheReply) {
  server.script(kPath, {fixture_reply("openai_chat_completion.json")});
  ProviderConfig config = config_for(server);
  config.price = {2.0, 8.0};
  auto provider = make_provider(config);
  Request request = sample_request();
  request.temperature = 0.2;
  request.max_tokens = 1000;

  Reply reply = provider->complete(request);

  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  const auto& sent = requests[0];
  EXPECT_EQ(sent.method, "POST");
  EXPECT_EQ(sent.path, "/v1/chat/completions");
  EXPECT_EQ(sent.header("Authorization"), std::string("Bearer ") + kKey);
  EXPECT_EQ(sent.header("Content-Type"), "application/json");
  json body = sent.json();
  EXPECT_EQ(body["model"], "gpt-4.1");
  EXPECT_EQ(body["temperature"], 0.2);
  EXPECT_EQ(body["max_tokens"], 1000);
  ASSERT_EQ(body["messages"].size(), 2u);
  EXPECT_EQ(body["messages"][0], (json{{"role", "system"}, {"content", "You optimize C++ functions."}}));
  EXPECT_EQ(body["messages"][1]["role"], "user");
  EXPECT_EQ(body["messages"][1]["content"], "Make total() faster:\nlong total(...)");

  EXPECT_NE(reply.text.find("```cpp\nlong total"), std::string::npos) << reply.text;
  EXPECT_EQ(reply.model, "gpt-4.1-2025-04-14");
  EXPECT_EQ(reply.finish_reason, "stop");
  EXPECT_EQ(reply.usage.input_tokens, 1200);
  EXPECT_EQ(reply.usage.output_tokens, 300);
  // 1200 * 2 / 1e6 + 300 * 8 / 1e6
  EXPECT_NEAR(reply.usage.cost_usd, 0.0048, 1e-12);
  EXPECT_EQ(reply.attempts, 1);
  EXPECT_GT(reply.latency_s, 0);
}

TEST_F(OpenAiProviderTest, UsesTheProvidersTemperatureAndMaxTokensByDefault) {
  server.script(kPath, {fixture_reply("openai_chat_completion.json")});
  ProviderConfig config = config_for(server);
  config.temperature = 0.9;
  config.max_tokens = 2048;
  make_provider(config)->complete(sample_request());
  json body = server.requests().at(0).json();
  EXPECT_EQ(body["temperature"], 0.9);
  EXPECT_EQ(body["max_tokens"], 2048);
}

TEST_F(OpenAiProviderTest, NoKeyVariableMeansNoAuthorizationHeader) {
  server.script(kPath, {fixture_reply("openai_chat_completion.json")});
  ProviderConfig config = config_for(server);
  config.api_key_env = "";
  make_provider(config)->complete(sample_request());
  EXPECT_FALSE(server.requests().at(0).has_header("Authorization"));
}

TEST_F(OpenAiProviderTest, AnUnsetKeyVariableIsAConfigErrorNamingIt) {
  ProviderConfig config = config_for(server);
  config.api_key = "";  // the variable was not set when the CLI read the environment
  auto provider = make_provider(config);
  std::string message = expect_error(ErrorKind::kConfig, [&] { provider->complete(sample_request()); });
  EXPECT_NE(message.find(kKeyEnv), std::string::npos) << message;
  EXPECT_TRUE(server.requests().empty());
}

TEST_F(OpenAiProviderTest, RefusalIsReportedAsSuch) {
  server.script(kPath, {fixture_reply("openai_refusal.json")});
  std::string message = expect_error(ErrorKind::kRefusal, [&] {
    make_provider(config_for(server))->complete(sample_request());
  });
  EXPECT_NE(message.find("I'm sorry, I can't assist"), std::string::npos) << message;
}

TEST_F(OpenAiProviderTest, ATruncatedReplyComesBackWithFinishReasonLength) {
  server.script(kPath, {fixture_reply("openai_length.json")});
  Reply reply = make_provider(config_for(server))->complete(sample_request());
  EXPECT_EQ(reply.finish_reason, "length");
  EXPECT_NE(reply.text.find("for (int v :"), std::string::npos);
  EXPECT_EQ(reply.usage.output_tokens, 16);
}

TEST_F(OpenAiProviderTest, WrongKeyIsAnAuthErrorThatNamesTheVariableAndHidesTheKey) {
  server.script(kPath, {fixture_reply("openai_error_401.json", 401)});
  ProviderConfig config = config_for(server);
  config.max_retries = 3;
  auto provider = make_provider(config);
  std::string message = expect_error(ErrorKind::kAuth, [&] { provider->complete(sample_request()); });
  EXPECT_NE(message.find(std::string("check ") + kKeyEnv), std::string::npos) << message;
  EXPECT_NE(message.find("HTTP 401"), std::string::npos) << message;
  EXPECT_NE(message.find("Incorrect API key provided"), std::string::npos) << message;
  EXPECT_EQ(message.find(kKey), std::string::npos) << message;
  EXPECT_EQ(message.find("maxcodeTestKey"), std::string::npos) << message;
  EXPECT_EQ(server.requests().size(), 1u) << "a wrong key is not retried";
}

TEST_F(OpenAiProviderTest, ForbiddenIsAnAuthErrorToo) {
  ScriptedReply forbidden = fixture_reply("openai_error_401.json", 403);
  server.script(kPath, {forbidden});
  expect_error(ErrorKind::kAuth, [&] { make_provider(config_for(server))->complete(sample_request()); });
}

TEST_F(OpenAiProviderTest, AnHtmlPageIsABadReply) {
  ScriptedReply page;
  page.body = maxcode::testing::llm_fixture("captive_portal.html");
  page.content_type = "text/html; charset=utf-8";
  server.script(kPath, {page});
  std::string message = expect_error(ErrorKind::kBadReply, [&] {
    make_provider(config_for(server))->complete(sample_request());
  });
  EXPECT_NE(message.find("expected JSON, got text/html"), std::string::npos) << message;
  EXPECT_NE(message.find("Sign in to the network"), std::string::npos) << message;
}

TEST_F(OpenAiProviderTest, InvalidJsonIsABadReply) {
  ScriptedReply cut;
  std::string whole = maxcode::testing::llm_fixture("openai_chat_completion.json");
  cut.body = whole.substr(0, whole.size() / 2);
  server.script(kPath, {cut});
  std::string message = expect_error(ErrorKind::kBadReply, [&] {
    make_provider(config_for(server))->complete(sample_request());
  });
  EXPECT_NE(message.find("invalid JSON"), std::string::npos) << message;
}

// A body nested a million deep (issue 22, point 9) is refused by the reader's depth
// limit, not walked (printing it into the message overflowed the stack).
TEST_F(OpenAiProviderTest, DeeplyNestedJsonIsABadReplyNotACrash) {
  ScriptedReply deep;
  deep.body = R"({"choices": )" + std::string(1'000'000, '[') + std::string(1'000'000, ']') + "}";
  server.script(kPath, {deep});
  std::string message = expect_error(ErrorKind::kBadReply, [&] {
    make_provider(config_for(server))->complete(sample_request());
  });
  EXPECT_NE(message.find("invalid JSON (reply: choices[0][0][0][0][0]...[0][0][0][0]: nested deeper than 512 levels)"),
            std::string::npos)
      << message.substr(0, 300);
  EXPECT_LT(message.size(), 2000u);
}

TEST_F(OpenAiProviderTest, JsonOfTheWrongShapeIsABadReply) {
  ScriptedReply empty;
  empty.body = R"({"id":"chatcmpl-1","object":"chat.completion","choices":[]})";
  server.script(kPath, {empty});
  std::string message = expect_error(ErrorKind::kBadReply, [&] {
    make_provider(config_for(server))->complete(sample_request());
  });
  EXPECT_NE(message.find("no choices"), std::string::npos) << message;
}

TEST_F(OpenAiProviderTest, BadRequestIsNotRetriedAndCarriesTheServersMessage) {
  server.script(kPath, {fixture_reply("openai_error_400.json", 400)});
  ProviderConfig config = config_for(server);
  config.max_retries = 3;
  std::string message = expect_error(ErrorKind::kBadReply, [&] {
    make_provider(config)->complete(sample_request());
  });
  EXPECT_NE(message.find("maximum context length"), std::string::npos) << message;
  EXPECT_NE(message.find("context_length_exceeded"), std::string::npos) << message;
  EXPECT_NE(message.find("propose: "), std::string::npos) << message;
  EXPECT_EQ(server.requests().size(), 1u);
}

// OpenAI's reasoning models refuse max_tokens (400) and take max_completion_tokens: by
// name under "auto"; a model the name does not give away switches after the 400, once.
TEST_F(OpenAiProviderTest, ReasoningModelsGetMaxCompletionTokens) {
  const std::string refusal =
      R"({"error": {"message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use )"
      R"('max_completion_tokens' instead.", "type": "invalid_request_error", "param": "max_tokens", )"
      R"("code": "unsupported_parameter"}})";
  ProviderConfig config = config_for(server);
  config.model = "o3-mini";
  server.script(kPath, {fixture_reply("openai_chat_completion.json")});
  make_provider(config)->complete(sample_request());
  json sent = json::parse(server.requests().back().body);
  EXPECT_TRUE(sent.contains("max_completion_tokens")) << sent.dump();
  EXPECT_FALSE(sent.contains("max_tokens")) << sent.dump();

  // A deployment named otherwise: the 400, then the other field, and it stays.
  config.model = "my-reasoner";
  server.script(kPath, {ScriptedReply{400, refusal}, fixture_reply("openai_chat_completion.json"),
                        fixture_reply("openai_chat_completion.json")});
  auto provider = make_provider(config);
  const std::size_t before = server.requests().size();
  provider->complete(sample_request());
  provider->complete(sample_request());
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), before + 3);
  EXPECT_TRUE(json::parse(requests[before].body).contains("max_tokens"));
  EXPECT_TRUE(json::parse(requests[before + 1].body).contains("max_completion_tokens"));
  EXPECT_TRUE(json::parse(requests[before + 2].body).contains("max_completion_tokens"));

  // Set by hand, the field is what the user asked for: the 400 is the answer.
  config.token_limit_field = "max_tokens";
  server.script(kPath, {ScriptedReply{400, refusal}});
  const std::string message = expect_error(ErrorKind::kBadReply, [&] { make_provider(config)->complete(sample_request()); });
  EXPECT_NE(message.find("max_completion_tokens"), std::string::npos) << message;
}

TEST_F(OpenAiProviderTest, NotFoundPointsAtBaseUrlAndModel) {
  server.script(kPath, {fixture_reply("openai_error_404.json", 404)});
  std::string message = expect_error(ErrorKind::kConfig, [&] {
    make_provider(config_for(server))->complete(sample_request());
  });
  EXPECT_NE(message.find("does not exist"), std::string::npos) << message;
  EXPECT_NE(message.find("check base_url and model"), std::string::npos) << message;
}

TEST_F(OpenAiProviderTest, AServerThatNeverAnswersTimesOut) {
  ScriptedReply silent = fixture_reply("openai_chat_completion.json");
  silent.delay_s = ScriptedReply::kNever;
  server.script(kPath, {silent});
  ProviderConfig config = config_for(server);
  config.timeout_s = 1;
  config.max_retries = 3;
  auto provider = make_provider(config);
  auto start = std::chrono::steady_clock::now();
  std::string message = expect_error(ErrorKind::kTimeout, [&] { provider->complete(sample_request()); });
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(elapsed, 0.9);
  EXPECT_LT(elapsed, config.timeout_s + 1);
  EXPECT_NE(message.find("timeout_s"), std::string::npos) << message;
}

TEST_F(OpenAiProviderTest, DescribeNamesModelAndEndpointButNoKey) {
  auto provider = make_provider(config_for(server));
  EXPECT_EQ(provider->describe(), "openai gpt-4.1 at " + server.url() + "/v1");
}

}  // namespace
}  // namespace maxcode::llm
