// Parsing the `llm` section of .maxcode.json: defaults per provider, strictness, and
// error messages that name the file and the field.
#include <gtest/gtest.h>

#include <string>

#include "runner/core/config.h"
#include "runner/llm/provider.h"

namespace maxcode::llm {
namespace {

using nlohmann::json;

ProviderConfig parse(const json& value) {
  return parse_provider_config(value, ".maxcode.json", "llm.propose");
}

std::string error_of(const json& value) {
  try {
    parse(value);
  } catch (const ConfigError& error) {
    return error.what();
  }
  ADD_FAILURE() << "expected a ConfigError for " << value.dump();
  return "";
}

TEST(LlmConfig, OpenAiDefaults) {
  ProviderConfig config = parse({{"provider", "openai"}, {"model", "gpt-4.1"}});
  EXPECT_EQ(config.provider, "openai");
  EXPECT_EQ(config.model, "gpt-4.1");
  EXPECT_EQ(config.base_url, "https://api.openai.com/v1");
  EXPECT_EQ(config.api_key_env, "OPENAI_API_KEY");
  EXPECT_EQ(config.timeout_s, 120);
  EXPECT_EQ(config.max_retries, 4);
  EXPECT_EQ(config.max_concurrency, 8);
  EXPECT_EQ(config.temperature, 0.7);
  EXPECT_EQ(config.max_tokens, 4096);
  EXPECT_EQ(config.price.input_per_mtok, 0);
}

TEST(LlmConfig, AnthropicDefaults) {
  ProviderConfig config = parse({{"provider", "anthropic"}, {"model", "claude-sonnet-4-20250514"}});
  EXPECT_EQ(config.base_url, "https://api.anthropic.com");
  EXPECT_EQ(config.api_key_env, "ANTHROPIC_API_KEY");
  EXPECT_EQ(config.anthropic_version, "2023-06-01");
}

TEST(LlmConfig, EveryFieldIsRead) {
  ProviderConfig config = parse(json::parse(R"({
    "provider": "openai", "model": "Qwen/Qwen2.5-Coder-7B-Instruct",
    "base_url": "http://127.0.0.1:8000/v1", "api_key_env": "",
    "timeout_s": 30.5, "max_retries": 2, "max_concurrency": 16,
    "temperature": 0, "max_tokens": 2048.0,
    "price": {"input_per_mtok": 0.1, "output_per_mtok": 0.4}
  })"));
  EXPECT_EQ(config.base_url, "http://127.0.0.1:8000/v1");
  EXPECT_EQ(config.api_key_env, "");
  EXPECT_EQ(config.timeout_s, 30.5);
  EXPECT_EQ(config.max_retries, 2);
  EXPECT_EQ(config.max_concurrency, 16);
  EXPECT_EQ(config.temperature, 0);
  EXPECT_EQ(config.max_tokens, 2048);
  EXPECT_EQ(config.price.input_per_mtok, 0.1);
  EXPECT_EQ(config.price.output_per_mtok, 0.4);
}

TEST(LlmConfig, CommandProvider) {
  ProviderConfig config = parse({{"provider", "command"}, {"command", "./scripts/llm.sh"}});
  EXPECT_EQ(config.command, "./scripts/llm.sh");
  EXPECT_EQ(config.model, "");
  EXPECT_EQ(config.base_url, "");
  EXPECT_EQ(error_of({{"provider", "command"}}), ".maxcode.json: llm.propose.command: missing required field");
}

TEST(LlmConfig, ErrorsNameTheFileAndField) {
  EXPECT_EQ(error_of({{"provider", "openai"}, {"model", "m"}, {"timeout_s", "60"}}),
            ".maxcode.json: llm.propose.timeout_s: expected a number, got a string");
  EXPECT_EQ(error_of({{"model", "m"}}), ".maxcode.json: llm.propose.provider: missing required field");
  EXPECT_EQ(error_of({{"provider", "openai"}}), ".maxcode.json: llm.propose.model: missing required field");
  EXPECT_EQ(error_of({{"provider", "gemini"}, {"model", "m"}}),
            ".maxcode.json: llm.propose.provider: unsupported provider 'gemini' (supported: "
            "openai, anthropic, command)");
  EXPECT_EQ(error_of({{"provider", "openai"}, {"model", "m"}, {"max_retries", 1.5}}),
            ".maxcode.json: llm.propose.max_retries: expected an integer, got 1.5");
  EXPECT_EQ(error_of({{"provider", "openai"}, {"model", "m"}, {"max_concurrency", 0}}),
            ".maxcode.json: llm.propose.max_concurrency: must be >= 1, got 0");
  EXPECT_EQ(error_of({{"provider", "openai"}, {"model", "m"}, {"timeout_s", 0}}),
            ".maxcode.json: llm.propose.timeout_s: must be > 0, got 0");
  EXPECT_EQ(error_of({{"provider", "openai"}, {"model", ""}}),
            ".maxcode.json: llm.propose.model: must not be empty");
  EXPECT_EQ(error_of({{"provider", "anthropic"}, {"model", "m"}, {"temperature", 1.5}}),
            ".maxcode.json: llm.propose.temperature: must be at most 1 for anthropic, got 1.5");
  EXPECT_EQ(error_of("openai"), ".maxcode.json: llm.propose: expected an object, got a string");
  EXPECT_EQ(error_of({{"provider", "openai"}, {"model", "m"}, {"token_limit_field", "max_tokenz"}}),
            ".maxcode.json: llm.propose.token_limit_field: must be auto, max_tokens or max_completion_tokens, "
            "got \"max_tokenz\"");
  EXPECT_EQ(parse({{"provider", "openai"}, {"model", "o3"}, {"token_limit_field", "max_completion_tokens"}})
                .token_limit_field,
            "max_completion_tokens");
  EXPECT_EQ(error_of({{"provider", "openai"}, {"model", "m"}, {"price", {{"input_per_mtok", -1}}}}),
            ".maxcode.json: llm.propose.price.input_per_mtok: must be >= 0, got -1");
}

TEST(LlmConfig, UnknownFieldsGetSuggestions) {
  EXPECT_EQ(error_of({{"provider", "openai"}, {"model", "m"}, {"temprature", 0.2}}),
            ".maxcode.json: llm.propose.temprature: unknown field (did you mean 'temperature'?)");
  EXPECT_EQ(error_of({{"provider", "openai"}, {"model", "m"}, {"price", {{"input", 1}}}}),
            ".maxcode.json: llm.propose.price.input: unknown field (known fields: "
            "input_per_mtok, output_per_mtok)");
}

TEST(LlmConfig, FieldsOfAnotherProviderAreErrors) {
  EXPECT_EQ(error_of({{"provider", "openai"}, {"model", "m"}, {"anthropic_version", "2023-06-01"}}),
            ".maxcode.json: llm.propose.anthropic_version: not used by the openai provider");
  EXPECT_EQ(error_of({{"provider", "command"}, {"command", "x"}, {"base_url", "http://h"}}),
            ".maxcode.json: llm.propose.base_url: not used by the command provider");
  EXPECT_EQ(error_of({{"provider", "anthropic"}, {"model", "m"}, {"command", "x"}}),
            ".maxcode.json: llm.propose.command: not used by the anthropic provider");
}

TEST(LlmConfig, BaseUrlMustBeHttpAndCarryNoCredentials) {
  EXPECT_EQ(error_of({{"provider", "openai"}, {"model", "m"}, {"base_url", "ftp://h/v1"}}),
            ".maxcode.json: llm.propose.base_url: expected an http:// or https:// URL");
  std::string message =
      error_of({{"provider", "openai"}, {"model", "m"}, {"base_url", "https://user:s3cret@h/v1"}});
  EXPECT_NE(message.find("credentials in the URL are not supported"), std::string::npos);
  EXPECT_EQ(message.find("s3cret"), std::string::npos) << message;
  EXPECT_NE(error_of({{"provider", "openai"}, {"model", "m"}, {"base_url", "http://h:99999"}}).find("bad port"),
            std::string::npos);
  EXPECT_NO_THROW(parse({{"provider", "openai"}, {"model", "m"}, {"base_url", "http://[::1]:8080/v1/"}}));
  // Built in code rather than parsed: the provider still never shows the password.
  ProviderConfig config = parse({{"provider", "openai"}, {"model", "m"}});
  config.base_url = "https://user:s3cret@example.com/v1";
  try {
    make_provider(config);
    ADD_FAILURE() << "expected an LlmError";
  } catch (const LlmError& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kConfig);
    EXPECT_EQ(std::string(error.what()).find("s3cret"), std::string::npos) << error.what();
  }
}

TEST(LlmConfig, ApiKeyEnvMustNameAVariableAndIsNeverEchoed) {
  std::string message =
      error_of({{"provider", "openai"}, {"model", "m"}, {"api_key_env", "sk-proj-abc123secret"}});
  EXPECT_NE(message.find("must name an environment variable"), std::string::npos) << message;
  EXPECT_EQ(message.find("abc123secret"), std::string::npos) << message;
}

TEST(LlmConfig, TheLlmSection) {
  LlmConfig empty = parse_llm_config(nullptr, ".maxcode.json");
  EXPECT_FALSE(empty.propose || empty.critique || empty.rerank);

  LlmConfig config = parse_llm_config(json::parse(R"({
    "propose": {"provider": "anthropic", "model": "claude-sonnet-4-20250514"},
    "critique": {"provider": "openai", "model": "gpt-4.1-mini"},
    "rerank": null
  })"),
                                      ".maxcode.json");
  ASSERT_TRUE(config.propose);
  EXPECT_EQ(config.propose->provider, "anthropic");
  ASSERT_TRUE(config.critique);
  EXPECT_EQ(config.critique->model, "gpt-4.1-mini");
  EXPECT_FALSE(config.rerank);

  try {
    parse_llm_config({{"propse", {{"provider", "openai"}, {"model", "m"}}}}, ".maxcode.json");
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_STREQ(error.what(), ".maxcode.json: llm.propse: unknown field (did you mean 'propose'?)");
  }
  try {
    parse_llm_config({{"critique", {{"provider", "openai"}}}}, "repo/.maxcode.json");
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_STREQ(error.what(), "repo/.maxcode.json: llm.critique.model: missing required field");
  }
  EXPECT_THROW(parse_llm_config(json::array(), ".maxcode.json"), ConfigError);
}

TEST(LlmConfig, MakeProviderDescribesWithoutKeys) {
  ProviderConfig config = parse({{"provider", "openai"}, {"model", "gpt-4.1"}});
  EXPECT_EQ(make_provider(config)->describe(), "openai gpt-4.1 at https://api.openai.com/v1");
  ProviderConfig unknown;
  unknown.provider = "gemini";
  try {
    make_provider(unknown);
    ADD_FAILURE() << "expected an LlmError";
  } catch (const LlmError& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kConfig);
    EXPECT_TRUE(error.stops_run());
  }
}

TEST(LlmConfig, ErrorKindNames) {
  EXPECT_STREQ(error_kind_name(ErrorKind::kAuth), "auth");
  EXPECT_STREQ(error_kind_name(ErrorKind::kRateLimited), "rate_limited");
  EXPECT_STREQ(error_kind_name(ErrorKind::kServer), "server");
  EXPECT_STREQ(error_kind_name(ErrorKind::kConnection), "connection");
  EXPECT_STREQ(error_kind_name(ErrorKind::kTimeout), "timeout");
  EXPECT_STREQ(error_kind_name(ErrorKind::kBadReply), "bad_reply");
  EXPECT_STREQ(error_kind_name(ErrorKind::kRefusal), "refusal");
  EXPECT_STREQ(error_kind_name(ErrorKind::kCommand), "command");
  EXPECT_STREQ(error_kind_name(ErrorKind::kConfig), "config");
}

}  // namespace
}  // namespace maxcode::llm
