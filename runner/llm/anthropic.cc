// The Anthropic Messages API. https://docs.anthropic.com/en/api/messages
#include <chrono>

#include "runner/llm/endpoint.h"
#include "runner/llm/http_client.h"
#include "runner/llm/providers.h"
#include "runner/llm/redact.h"

namespace maxcode::llm {
namespace {

using nlohmann::json;

// Anthropic's stop reasons in the OpenAI vocabulary the rest of maxcode uses.
std::string normalised_finish(const std::string& stop_reason) {
  if (stop_reason == "end_turn" || stop_reason == "stop_sequence") return "stop";
  if (stop_reason == "max_tokens") return "length";
  return stop_reason;
}

class AnthropicProvider : public HttpProvider {
 public:
  explicit AnthropicProvider(const ProviderConfig& config) : HttpProvider(config, "anthropic") {}

 private:
  Reply call(const Request& request) override {
    auto start = std::chrono::steady_clock::now();
    std::string key = http_.api_key();
    // The API takes the system prompt as a top-level field, not as a message.
    std::string system;
    json messages = json::array();
    for (const Message& message : request.messages) {
      if (message.role == "system") {
        system += (system.empty() ? "" : "\n\n") + message.content;
      } else if (message.role == "user" || message.role == "assistant") {
        messages.push_back({{"role", message.role}, {"content", message.content}});
      } else {
        throw LlmError(ErrorKind::kConfig,
                       label_ + ": unsupported message role '" + message.role + "'");
      }
    }
    json body = {{"model", config_.model},
                 {"max_tokens", max_tokens_for(request, config_)},
                 {"messages", std::move(messages)},
                 {"temperature", temperature_for(request, config_)}};
    if (!system.empty()) body["system"] = system;
    HeaderList headers = {{"anthropic-version", config_.anthropic_version}};
    if (!key.empty()) headers.emplace_back("x-api-key", key);

    JsonReply answer = http_.post_json("/v1/messages", headers, dump_json(body), key);
    Reply reply = read_reply(answer.body);
    reply.attempts = answer.attempts;
    reply.latency_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return reply;
  }

  [[noreturn]] void fail(const std::string& problem,
                         const json& body) const {
    throw LlmError(ErrorKind::kBadReply, label_ + ": " + problem + ": " + excerpt(dump_json(body)));
  }

  Reply read_reply(const json& body) const {
    if (!body.is_object() || !body.contains("content") || !body["content"].is_array()) {
      fail("reply has no content", body);
    }
    std::string stop_reason = string_field(body, "stop_reason");
    std::string text;
    for (const json& block : body["content"]) {
      // Text may come in several blocks (around citations); other block types
      // (thinking, tool_use) are not part of the answer.
      if (string_field(block, "type") == "text") {
        text += string_field(block, "text");
      }
    }
    if (stop_reason == "refusal") {
      throw LlmError(ErrorKind::kRefusal,
                     label_ + ": the model refused" + (text.empty() ? "" : ": " + excerpt(text, 500)));
    }
    if (text.empty()) {
      fail("reply has no text (stop_reason " + (stop_reason.empty() ? "none" : stop_reason) + ")",
           body);
    }
    Reply reply;
    reply.text = std::move(text);
    reply.finish_reason = normalised_finish(stop_reason);
    reply.model = string_field(body, "model");
    if (reply.model.empty()) reply.model = config_.model;
    const json& usage = body.contains("usage") ? body["usage"] : json::object();
    // Cached prompt tokens are counted apart from input_tokens; they are input all the
    // same (priced here at the input rate, which overstates cache reads).
    long input = count_field(usage, "input_tokens") + count_field(usage, "cache_creation_input_tokens") +
                 count_field(usage, "cache_read_input_tokens");
    reply.usage = priced_usage(input, count_field(usage, "output_tokens"), config_.price);
    return reply;
  }
};

}  // namespace

std::unique_ptr<Provider> make_anthropic_provider(const ProviderConfig& config) {
  return std::make_unique<AnthropicProvider>(config);
}

}  // namespace maxcode::llm
