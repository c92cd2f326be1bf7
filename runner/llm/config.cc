// Strict parsing of the `llm` section of .maxcode.json, in the manner of runner/core/config.cc:
// every error names the file and the field, a typo gets a suggestion, and a field that
// belongs to another provider is an error rather than silently ignored.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <string_view>
#include <vector>

#include "runner/core/config.h"
#include "runner/llm/endpoint.h"
#include "runner/llm/provider.h"
#include "runner/util/json_fields.h"
#include "runner/util/json_io.h"
#include "runner/util/json_reader.h"

namespace maxcode::llm {
namespace {

using nlohmann::json;

const std::vector<std::string_view> kProviders = {"openai", "anthropic", "command"};

// Every field some provider takes, and which ones each provider takes.
const std::vector<std::string_view> kAllFields = {
    "provider",    "model",       "base_url",  "api_key_env",       "command",
    "timeout_s",   "max_retries", "max_retry_wait_s", "max_concurrency", "temperature", "max_tokens",
    "token_limit_field", "anthropic_version", "price"};
const std::vector<std::string_view> kOpenAiFields = {
    "provider",        "model",       "base_url",   "api_key_env", "timeout_s", "max_retries",
    "max_retry_wait_s", "max_concurrency", "temperature", "max_tokens", "token_limit_field", "price"};
const std::vector<std::string_view> kAnthropicFields = {
    "provider",    "model",      "base_url", "api_key_env",      "timeout_s", "max_retries",
    "max_retry_wait_s", "max_concurrency", "temperature", "max_tokens", "anthropic_version", "price"};
// temperature and max_tokens reach the program as environment variables.
const std::vector<std::string_view> kCommandFields = {
    "provider", "model", "command", "timeout_s", "max_concurrency", "temperature", "max_tokens"};

bool contains(const std::vector<std::string_view>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

bool is_variable_name(std::string_view name) {
  auto head = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
  auto tail = [&](char c) { return head(c) || std::isdigit(static_cast<unsigned char>(c)); };
  return !name.empty() && head(name.front()) && std::all_of(name.begin() + 1, name.end(), tail);
}

// Checks that `object` holds only `known` fields; a field another provider takes is
// named as such (the common mistake after switching providers).
void check_keys(const JsonNode& object, const std::vector<std::string_view>& known, const std::string& owner) {
  object.expect(object.value().is_object(), "an object");
  for (const auto& [key, item] : object.value().items())
    if (!contains(known, key) && contains(kAllFields, key) && !owner.empty())
      object.child(key).fail("not used by the " + owner + " provider");
  JsonObject checked(object, known);
}

Price parse_price(const JsonNode& field) {
  const JsonObject object(field, {"input_per_mtok", "output_per_mtok"});
  Price price;
  price.input_per_mtok = object.number("input_per_mtok", price.input_per_mtok, kNonNegative);
  price.output_per_mtok = object.number("output_per_mtok", price.output_per_mtok, kNonNegative);
  return price;
}

// Where the provider is reached and which variable holds its key: each HTTP provider's
// own defaults, then what the file says.
void read_endpoint(const JsonNode& object, ProviderConfig& config) {
  const json& value = object.value();
  auto has = [&](const char* key) { return value.contains(key); };
  if (config.provider == "openai") {
    config.base_url = "https://api.openai.com/v1";
    config.api_key_env = "OPENAI_API_KEY";
  } else if (config.provider == "anthropic") {
    config.base_url = "https://api.anthropic.com";
    config.api_key_env = "ANTHROPIC_API_KEY";
  }
  if (has("base_url")) {
    const JsonNode field = object.child("base_url");
    config.base_url = field.non_empty_string();
    Endpoint endpoint;
    // The URL itself is not repeated: it might carry credentials.
    if (std::string problem = parse_endpoint(config.base_url, endpoint); !problem.empty()) {
      field.fail(problem);
    }
  }
  if (has("api_key_env")) {
    const JsonNode field = object.child("api_key_env");
    config.api_key_env = field.string();
    // Not echoed: a common mistake is to paste the key itself here.
    if (!config.api_key_env.empty() && !is_variable_name(config.api_key_env)) {
      field.fail("must name an environment variable (letters, digits, '_'), not hold the key; "
                 "use \"\" for a server without keys");
    }
  }
}

// How each call is made and bounded: time, retries, concurrency, sampling, tokens, price.
void read_call_settings(const JsonNode& object, ProviderConfig& config) {
  const json& value = object.value();
  auto has = [&](const char* key) { return value.contains(key); };
  if (has("timeout_s")) config.timeout_s = object.child("timeout_s").number(kPositive);
  if (has("max_retries")) config.max_retries = object.child("max_retries").integer(0);
  if (has("max_retry_wait_s")) config.max_retry_wait_s = object.child("max_retry_wait_s").number(kNonNegative);
  if (has("max_concurrency")) config.max_concurrency = object.child("max_concurrency").integer(1);
  if (has("temperature")) {
    const JsonNode field = object.child("temperature");
    config.temperature = field.number(kNonNegative);
    // The APIs' own ranges: caught here rather than as a 400 on every call.
    double most = config.provider == "anthropic" ? 1 : 2;
    if (config.temperature > most) {
      field.fail("must be at most " + std::to_string(static_cast<int>(most)) + " for " + config.provider + ", got " +
                 dump_json(field.value()));
    }
  }
  if (has("max_tokens")) config.max_tokens = object.child("max_tokens").integer(1);
  if (has("token_limit_field")) {
    const JsonNode field = object.child("token_limit_field");
    config.token_limit_field = field.non_empty_string();
    if (config.token_limit_field != "auto" && config.token_limit_field != "max_tokens" &&
        config.token_limit_field != "max_completion_tokens")
      field.fail("must be auto, max_tokens or max_completion_tokens, got " + dump_json(field.value()));
  }
  if (has("anthropic_version")) {
    config.anthropic_version = object.child("anthropic_version").non_empty_string();
  }
  if (has("price")) config.price = parse_price(object.child("price"));
}

}  // namespace

ProviderConfig parse_provider_config(const json& value, const std::string& file_label, const std::string& field_path) {
  const JsonNode object = JsonNode(value, file_label, raise_as<ConfigError>).at_path(field_path);
  object.expect(value.is_object(), "an object");
  if (!value.contains("provider")) object.absent("provider").fail("missing required field");
  ProviderConfig config;
  const JsonNode provider = object.child("provider");
  config.provider = provider.string();
  if (!contains(kProviders, config.provider)) {
    provider.fail("unsupported provider '" + config.provider + "' (supported: " + join_words(kProviders) + ")");
  }
  bool http = config.provider != "command";
  check_keys(object,
             config.provider == "openai"      ? kOpenAiFields
             : config.provider == "anthropic" ? kAnthropicFields
                                              : kCommandFields,
             config.provider);

  auto has = [&](const char* key) { return value.contains(key); };
  if (http && !has("model")) {
    object.absent("model").fail("missing required field");
  }
  if (has("model")) config.model = object.child("model").non_empty_string();

  read_endpoint(object, config);
  if (config.provider == "command") {
    if (!has("command")) {
      object.absent("command").fail("missing required field");
    }
    config.command = object.child("command").non_empty_string();
  }
  read_call_settings(object, config);
  return config;
}

LlmConfig parse_llm_config(const json& llm, const std::string& file_label) {
  LlmConfig config;
  if (llm.is_null()) return config;
  const JsonObject object(JsonNode(llm, file_label, raise_as<ConfigError>).at_path("llm"),
                          {"propose", "critique", "rerank"});
  auto read = [&](const char* role, std::optional<ProviderConfig>& slot) {
    auto found = llm.find(role);
    if (found == llm.end() || found->is_null()) return;
    slot = parse_provider_config(*found, file_label, std::string("llm.") + role);
  };
  read("propose", config.propose);
  read("critique", config.critique);
  read("rerank", config.rerank);
  return config;
}

}  // namespace maxcode::llm
