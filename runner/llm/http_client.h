// The HTTP side shared by the OpenAI and Anthropic providers: TLS with certificate
// verification, a time limit on every attempt, retries with backoff, the per-provider
// cap on calls in flight, and turning every failure into an LlmError that says what
// happened without giving away the key.
#pragma once

#include <mutex>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/llm/endpoint.h"
#include "runner/llm/provider.h"
#include "runner/llm/slots.h"

namespace maxcode::llm {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct JsonReply {
  nlohmann::json body;
  int attempts = 1;
};

class HttpClient {
 public:
  // `label` starts every error message ("openai gpt-4.1 at https://api.openai.com/v1").
  // Throws LlmError(kConfig) when config.base_url is not a usable URL.
  HttpClient(const ProviderConfig& config, std::string label);

  // The key, read from the environment now rather than at start-up so that a key
  // exported (or rotated) while maxcode runs is the one used. "" when api_key_env is "".
  // Throws LlmError(kConfig) naming the variable when it is unset or empty.
  std::string api_key() const;

  // POSTs the JSON `body` to the endpoint's prefix + `path` and returns the parsed reply
  // of a 2xx answer. `key` is only used to scrub error text. Throws LlmError.
  JsonReply post_json(const std::string& path, const HeaderList& headers,
                      const std::string& body, const std::string& key);

  const Endpoint& endpoint() const { return endpoint_; }

 private:
  struct Attempt;
  struct Verdict;
  Attempt send_once(const std::string& path, const HeaderList& headers,
                    const std::string& body) const;
  Verdict judge(const Attempt& attempt, const std::string& path) const;
  double next_wait_s(int retry);

  ProviderConfig config_;
  std::string label_;
  Endpoint endpoint_;
  Slots slots_;
  std::mutex random_mutex_;
  std::mt19937_64 random_;
};

// The human part of an error body: OpenAI's {"error":{"message","type","code"}},
// Anthropic's {"type":"error","error":{"type","message"}}, vLLM's top-level "message",
// Ollama's {"error":"..."}; otherwise what the body is, briefly.
std::string server_message(const std::string& body, const std::string& content_type);

}  // namespace maxcode::llm
