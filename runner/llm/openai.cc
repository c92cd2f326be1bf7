// The OpenAI-compatible chat-completions API: OpenAI itself and the servers that copy it
// (vLLM, llama.cpp server, Ollama, SGLang, TGI).
// https://platform.openai.com/docs/api-reference/chat
#include <chrono>
#include <mutex>

#include "runner/llm/endpoint.h"
#include "runner/llm/http_client.h"
#include "runner/llm/providers.h"
#include "runner/llm/redact.h"
#include "runner/util/json_io.h"

namespace maxcode::llm {
namespace {

using nlohmann::json;

// `content` is a string from OpenAI; some compatible servers send a list of parts.
std::string content_text(const json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string text;
  if (content.is_array()) {
    for (const json& part : content) {
      if (string_field(part, "type") == "text") {
        text += string_field(part, "text");
      }
    }
  }
  return text;
}

// OpenAI's reasoning models take max_completion_tokens and refuse max_tokens.
bool reasoning_model(const std::string& model) {
  for (const char* prefix : {"o1", "o3", "o4", "gpt-5"})
    if (model.rfind(prefix, 0) == 0) return true;
  return false;
}

std::string first_token_field(const ProviderConfig& config) {
  if (config.token_limit_field != "auto") return config.token_limit_field;
  return reasoning_model(config.model) ? "max_completion_tokens" : "max_tokens";
}

// A 400 whose message names the other field as the one to use ("Unsupported parameter:
// 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.").
bool asks_for_other_field(const LlmError& e, const std::string& sent) {
  const std::string other = sent == "max_tokens" ? "max_completion_tokens" : "max_tokens";
  const std::string text = e.what();
  return e.kind() == ErrorKind::kBadReply && text.find("HTTP 400") != std::string::npos &&
         text.find("'" + sent + "'") != std::string::npos && text.find("'" + other + "'") != std::string::npos;
}

class OpenAiProvider : public HttpProvider {
 public:
  explicit OpenAiProvider(const ProviderConfig& config)
      : HttpProvider(config, "openai"), token_field_(first_token_field(config)) {}

 private:
  Reply call(const Request& request) override {
    auto start = std::chrono::steady_clock::now();
    std::string key = http_.api_key();
    json messages = json::array();
    for (const Message& message : request.messages) {
      messages.push_back({{"role", message.role}, {"content", message.content}});
    }
    json body = {{"model", config_.model},
                 {"messages", std::move(messages)},
                 {"temperature", temperature_for(request, config_)}};
    HeaderList headers;
    if (!key.empty()) headers.emplace_back("Authorization", "Bearer " + key);

    std::string field = token_field();
    body[field] = max_tokens_for(request, config_);
    JsonReply answer;
    try {
      answer = http_.post_json("/chat/completions", headers, dump_json(body), key);
    } catch (const LlmError& e) {
      // Only under "auto": a field the user set is what the user wants, and its 400 says so.
      if (config_.token_limit_field != "auto" || !asks_for_other_field(e, field)) throw;
      body.erase(field);
      field = field == "max_tokens" ? "max_completion_tokens" : "max_tokens";
      body[field] = max_tokens_for(request, config_);
      set_token_field(field);
      answer = http_.post_json("/chat/completions", headers, dump_json(body), key);
    }
    Reply reply = read_reply(answer.body);
    reply.attempts = answer.attempts;
    reply.latency_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return reply;
  }

  [[noreturn]] void fail(ErrorKind kind, const std::string& problem,
                         const json& body) const {
    throw LlmError(kind, label_ + ": " + problem + ": " + excerpt(dump_json(body)));
  }

  Reply read_reply(const json& body) const {
    if (!body.is_object() || !body.contains("choices") || !body["choices"].is_array() ||
        body["choices"].empty() || !body["choices"][0].is_object()) {
      fail(ErrorKind::kBadReply, "reply has no choices", body);
    }
    const json& choice = body["choices"][0];
    if (!choice.contains("message") || !choice["message"].is_object()) {
      fail(ErrorKind::kBadReply, "reply has no choices[0].message", body);
    }
    const json& message = choice["message"];
    std::string finish = string_field(choice, "finish_reason");
    if (auto refusal = message.find("refusal"); refusal != message.end() && !refusal->is_null()) {
      std::string text = refusal->is_string() ? refusal->get<std::string>() : dump_json(*refusal);
      throw LlmError(ErrorKind::kRefusal, label_ + ": the model refused: " + excerpt(text, 500));
    }
    if (finish == "content_filter") {
      throw LlmError(ErrorKind::kRefusal,
                     label_ + ": the reply was stopped by the provider's content filter");
    }
    Reply reply;
    reply.text = content_text(message.value("content", json()));
    if (reply.text.empty()) {
      fail(ErrorKind::kBadReply,
           "reply has no text (finish_reason " + (finish.empty() ? "none" : finish) + ")", body);
    }
    reply.finish_reason = finish;
    reply.model = string_field(body, "model");
    if (reply.model.empty()) reply.model = config_.model;
    const json& usage = body.contains("usage") ? body["usage"] : json::object();
    reply.usage = priced_usage(count_field(usage, "prompt_tokens"), count_field(usage, "completion_tokens"),
                               config_.price);
    return reply;
  }

  std::string token_field() const {
    std::lock_guard lock(field_mutex_);
    return token_field_;
  }
  void set_token_field(const std::string& field) {
    std::lock_guard lock(field_mutex_);
    token_field_ = field;
  }

  // Calls run concurrently (max_concurrency); the field learned from a 400 is shared.
  mutable std::mutex field_mutex_;
  std::string token_field_;
};

}  // namespace

std::unique_ptr<Provider> make_openai_provider(const ProviderConfig& config) {
  return std::make_unique<OpenAiProvider>(config);
}

}  // namespace maxcode::llm
