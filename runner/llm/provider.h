// LLM providers: one interface over the OpenAI-compatible chat-completions API (OpenAI,
// vLLM, llama.cpp server, Ollama, SGLang, TGI), the Anthropic Messages API, and a local
// command. Proposal, critique and reranking may each use their own provider.
//
// Keys come from environment variables named in the config and never appear in
// messages, logs, reports or checkpoints.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/util/error.h"

namespace maxcode::llm {

struct Message {
  std::string role;  // "system" | "user" | "assistant"
  std::string content;
};

struct Request {
  std::vector<Message> messages;
  std::string purpose;  // "propose" | "critique" | "rerank": for errors and usage records
  std::optional<double> temperature;  // overrides the provider's
  std::optional<int> max_tokens;      // overrides the provider's
};

struct Usage {
  long input_tokens = 0;
  long output_tokens = 0;
  double cost_usd = 0;  // from the provider's price table; 0 when none is configured
};

struct Reply {
  std::string text;
  std::string model;          // as the server reported it
  std::string finish_reason;  // "stop", "length" (cut off), ... normalised across APIs
  Usage usage;
  double latency_s = 0;
  int attempts = 1;
};

// Why a call failed. kAuth stops a whole run (a wrong key does not fix itself);
// everything else fails one candidate.
enum class ErrorKind {
  kAuth,         // 401 / 403: the message names the environment variable to check
  kRateLimited,  // 429 after every retry
  kServer,       // 5xx after every retry
  kConnection,   // refused, reset, DNS, TLS (certificate) errors, after every retry
  kTimeout,      // no complete answer within timeout_s
  kBadReply,     // not JSON, an HTML page, JSON of the wrong shape, no text
  kRefusal,      // the model declined (OpenAI `refusal`, Anthropic stop_reason "refusal")
  kCommand,      // the command provider's program failed
  kConfig,       // e.g. the key's environment variable is not set
};
const char* error_kind_name(ErrorKind kind);

// Retryable when the failure may pass (a rate limit, a server error, a dropped
// connection): HttpClient has retried those itself already; the flag tells a caller
// above whether trying the whole request later may succeed.
class LlmError : public Error {
 public:
  LlmError(ErrorKind kind, const std::string& message, Retryable retryable = Retryable::kNo)
      : Error(message, retryable),
        kind_(kind) {}
  ErrorKind kind() const { return kind_; }
  bool stops_run() const { return kind_ == ErrorKind::kAuth || kind_ == ErrorKind::kConfig; }

 private:
  ErrorKind kind_;
};

struct Price {
  double input_per_mtok = 0;   // USD per million input tokens
  double output_per_mtok = 0;  // USD per million output tokens
};

struct ProviderConfig {
  std::string provider;  // "openai" | "anthropic" | "command"
  std::string model;     // required for openai and anthropic
  std::string base_url;  // default https://api.openai.com/v1 or https://api.anthropic.com
  std::string api_key_env;  // default OPENAI_API_KEY / ANTHROPIC_API_KEY; "" allowed for
                            // local servers when explicitly set to ""
  // The value of api_key_env, from the environment the CLI read (with_keys in
  // search/method.cc); never in a file, never in a result. Empty: not set.
  std::string api_key;
  std::string command;   // for "command": run through /bin/sh -c, prompt on stdin
  double timeout_s = 120;
  int max_retries = 4;
  // The longest wait a server's retry-after is honoured for; past it the call ends as
  // rate-limited at once (a search better moves on than sits out a long window).
  double max_retry_wait_s = 60;
  int max_concurrency = 8;
  double temperature = 0.7;
  int max_tokens = 4096;
  // openai: the request field that carries max_tokens. OpenAI's reasoning models (o1, o3,
  // o4-mini, gpt-5) take only "max_completion_tokens" and answer 400 to "max_tokens",
  // which compatible servers (vLLM, llama.cpp, Ollama) take. "auto": by the model's name,
  // and a 400 that asks for the other field switches to it once, for good.
  std::string token_limit_field = "auto";
  std::string anthropic_version = "2023-06-01";
  Price price;
};

// Parses one provider object, e.g. the value of llm.propose. Errors (ConfigError-style
// text) read "<file_label>: llm.propose.timeout_s: expected a number, got a string".
ProviderConfig parse_provider_config(const nlohmann::json& value, const std::string& file_label,
                                     const std::string& field_path);

struct LlmConfig {
  std::optional<ProviderConfig> propose;
  std::optional<ProviderConfig> critique;  // default: none -> the metrics critic
  std::optional<ProviderConfig> rerank;    // default: none -> no reranking
};
// The whole `llm` object of .maxcode.json (null or absent -> all empty). Unknown fields
// are errors with a "did you mean" suggestion, as in config.cc.
LlmConfig parse_llm_config(const nlohmann::json& llm, const std::string& file_label);

class Provider {
 public:
  virtual ~Provider() = default;
  // Thread-safe; blocks while max_concurrency calls are already under way. Throws
  // LlmError.
  virtual Reply complete(const Request& request) = 0;
  // "openai gpt-4.1 at https://api.openai.com/v1": no key material.
  virtual std::string describe() const = 0;
};

std::unique_ptr<Provider> make_provider(const ProviderConfig& config);

}  // namespace maxcode::llm
