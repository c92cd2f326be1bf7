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
#include "runner/util/json_fields.h"
#include "runner/llm/endpoint.h"
#include "runner/llm/provider.h"
#include "runner/util/json_io.h"

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

// One value of the document and its place in it, for checked reads and errors.
struct Field {
  const json& value;
  std::string path;
  const std::string& label;

  [[noreturn]] void fail(const std::string& problem) const {
    throw ConfigError(label + ": " + path + ": " + problem);
  }
  void expect(bool ok, const char* expected) const {
    if (!ok) fail(std::string("expected ") + expected + ", got " + describe_type(value));
  }
  Field at(const std::string& key) const { return {value.at(key), path + "." + key, label}; }

  std::string string() const {
    expect(value.is_string(), "a string");
    return value.get<std::string>();
  }
  std::string non_empty_string() const {
    std::string text = string();
    if (text.empty()) fail("must not be empty");
    return text;
  }
  double number(double min, bool strict) const {
    expect(value.is_number(), "a number");
    double number = value.get<double>();
    if (!std::isfinite(number) || (strict ? number <= min : number < min)) {
      // Whole bounds print as "> 0", not "> 0.0".
      std::string bound = min == std::trunc(min) ? std::to_string(static_cast<long long>(min))
                                                 : dump_json(json(min));
      fail(std::string("must be ") + (strict ? "> " : ">= ") + bound + ", got " + dump_json(value));
    }
    return number;
  }
  // Whole numbers written as 3.0 are accepted, 1.5 is not.
  int integer(int min) const {
    expect(value.is_number(), "an integer");
    double number = value.get<double>();
    if (number != std::trunc(number)) fail("expected an integer, got " + dump_json(value));
    if (number < min || number > std::numeric_limits<int>::max()) {
      fail("must be between " + std::to_string(min) + " and " +
           std::to_string(std::numeric_limits<int>::max()) + ", got " + dump_json(value));
    }
    return static_cast<int>(number);
  }
  void check_keys(const std::vector<std::string_view>& known, const std::string& owner) const {
    expect(value.is_object(), "an object");
    for (const auto& [key, item] : value.items()) {
      if (contains(known, key)) continue;
      Field field{item, path + "." + key, label};
      if (contains(kAllFields, key) && !owner.empty()) {
        field.fail("not used by the " + owner + " provider");
      }
      field.fail("unknown field (" + suggest_field(key, known) + ")");
    }
  }
};

Price parse_price(const Field& field) {
  field.check_keys({"input_per_mtok", "output_per_mtok"}, "");
  Price price;
  if (field.value.contains("input_per_mtok")) {
    price.input_per_mtok = field.at("input_per_mtok").number(0, false);
  }
  if (field.value.contains("output_per_mtok")) {
    price.output_per_mtok = field.at("output_per_mtok").number(0, false);
  }
  return price;
}

}  // namespace

ProviderConfig parse_provider_config(const json& value, const std::string& file_label,
                                     const std::string& field_path) {
  Field object{value, field_path, file_label};
  object.expect(value.is_object(), "an object");
  if (!value.contains("provider")) {
    Field{value, field_path + ".provider", file_label}.fail("missing required field");
  }
  ProviderConfig config;
  Field provider = object.at("provider");
  config.provider = provider.string();
  if (!contains(kProviders, config.provider)) {
    provider.fail("unsupported provider '" + config.provider + "' (supported: " +
                  join_words(kProviders) + ")");
  }
  bool http = config.provider != "command";
  object.check_keys(config.provider == "openai"      ? kOpenAiFields
                    : config.provider == "anthropic" ? kAnthropicFields
                                                     : kCommandFields,
                    config.provider);

  auto has = [&](const char* key) { return value.contains(key); };
  if (http && !has("model")) {
    Field{value, field_path + ".model", file_label}.fail("missing required field");
  }
  if (has("model")) config.model = object.at("model").non_empty_string();

  if (config.provider == "openai") {
    config.base_url = "https://api.openai.com/v1";
    config.api_key_env = "OPENAI_API_KEY";
  } else if (config.provider == "anthropic") {
    config.base_url = "https://api.anthropic.com";
    config.api_key_env = "ANTHROPIC_API_KEY";
  }
  if (has("base_url")) {
    Field field = object.at("base_url");
    config.base_url = field.non_empty_string();
    Endpoint endpoint;
    // The URL itself is not repeated: it might carry credentials.
    if (std::string problem = parse_endpoint(config.base_url, endpoint); !problem.empty()) {
      field.fail(problem);
    }
  }
  if (has("api_key_env")) {
    Field field = object.at("api_key_env");
    config.api_key_env = field.string();
    // Not echoed: a common mistake is to paste the key itself here.
    if (!config.api_key_env.empty() && !is_variable_name(config.api_key_env)) {
      field.fail("must name an environment variable (letters, digits, '_'), not hold the key; "
                 "use \"\" for a server without keys");
    }
  }
  if (config.provider == "command") {
    if (!has("command")) {
      Field{value, field_path + ".command", file_label}.fail("missing required field");
    }
    config.command = object.at("command").non_empty_string();
  }
  if (has("timeout_s")) config.timeout_s = object.at("timeout_s").number(0, true);
  if (has("max_retries")) config.max_retries = object.at("max_retries").integer(0);
  if (has("max_retry_wait_s")) config.max_retry_wait_s = object.at("max_retry_wait_s").number(0, false);
  if (has("max_concurrency")) config.max_concurrency = object.at("max_concurrency").integer(1);
  if (has("temperature")) {
    Field field = object.at("temperature");
    config.temperature = field.number(0, false);
    // The APIs' own ranges: caught here rather than as a 400 on every call.
    double most = config.provider == "anthropic" ? 1 : 2;
    if (config.temperature > most) {
      field.fail("must be at most " + std::to_string(static_cast<int>(most)) + " for " +
                 config.provider + ", got " + dump_json(field.value));
    }
  }
  if (has("max_tokens")) config.max_tokens = object.at("max_tokens").integer(1);
  if (has("token_limit_field")) {
    Field field = object.at("token_limit_field");
    config.token_limit_field = field.non_empty_string();
    if (config.token_limit_field != "auto" && config.token_limit_field != "max_tokens" &&
        config.token_limit_field != "max_completion_tokens")
      field.fail("must be auto, max_tokens or max_completion_tokens, got " + dump_json(field.value));
  }
  if (has("anthropic_version")) {
    config.anthropic_version = object.at("anthropic_version").non_empty_string();
  }
  if (has("price")) config.price = parse_price(object.at("price"));
  return config;
}

LlmConfig parse_llm_config(const json& llm, const std::string& file_label) {
  LlmConfig config;
  if (llm.is_null()) return config;
  Field object{llm, "llm", file_label};
  object.check_keys({"propose", "critique", "rerank"}, "");
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
