// The concrete providers behind make_provider, and what they share.
#pragma once

#include <memory>
#include <string>

#include "runner/llm/endpoint.h"
#include "runner/llm/http_client.h"
#include "runner/llm/provider.h"

namespace maxcode::llm {

std::unique_ptr<Provider> make_openai_provider(const ProviderConfig& config);
std::unique_ptr<Provider> make_anthropic_provider(const ProviderConfig& config);
std::unique_ptr<Provider> make_command_provider(const ProviderConfig& config);

// Token counts priced with the provider's table (USD per million tokens).
Usage priced_usage(long input_tokens, long output_tokens, const Price& price);

// The request's own temperature / max_tokens when set, else the provider's.
double temperature_for(const Request& request, const ProviderConfig& config);
int max_tokens_for(const Request& request, const ProviderConfig& config);

// Runs `call`, prefixing the message of any LlmError with the request's purpose
// ("propose: openai gpt-4.1 at ...: HTTP 429 ..."), so a log line says which step failed.
template <class Call>
Reply with_purpose(const Request& request, Call&& call) {
  try {
    return call();
  } catch (const LlmError& error) {
    if (request.purpose.empty()) throw;
    throw LlmError(error.kind(), request.purpose + ": " + error.what(),
                   error.retryable() ? Retryable::kYes : Retryable::kNo);
  }
}

// What the providers that speak HTTP share: their config, the label errors and progress
// name them by ("openai gpt-4.1 at https://api.openai.com"), the HTTP client, and
// complete() running the wire format's call() under the request's purpose.
class HttpProvider : public Provider {
 public:
  HttpProvider(const ProviderConfig& config, const std::string& wire)
      : config_(config),
        label_(wire + " " + config.model + " at " + display_url(config.base_url)),
        http_(config, label_) {}

  std::string describe() const override { return label_; }
  Reply complete(const Request& request) override {
    return with_purpose(request, [&] { return call(request); });
  }

 protected:
  virtual Reply call(const Request& request) = 0;

  ProviderConfig config_;
  std::string label_;
  HttpClient http_;
};

// Lenient reads of reply fields (servers differ in what they leave out): the string or
// the number at `key` of `object`, "" or 0 when absent or of another type.
std::string string_field(const nlohmann::json& object, const char* key);
long count_field(const nlohmann::json& object, const char* key);

// Prompts may quote source files that are not valid UTF-8 (Latin-1 comments); JSON must
// be, so such bytes become U+FFFD rather than failing the call.
std::string dump_json(const nlohmann::json& value);

}  // namespace maxcode::llm
