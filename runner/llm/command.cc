// The `command` provider: any local program as a model. The prompt goes to its standard
// input as plain text, its standard output is the reply. Lets people plug in CLIs,
// wrappers and offline models without maxcode learning their APIs.
#include <chrono>
#include <cstdio>

#include "runner/llm/providers.h"
#include "runner/llm/redact.h"
#include "runner/util/secrets.h"
#include "runner/llm/slots.h"
#include "runner/util/process.h"

namespace maxcode::llm {
namespace {

// "### system\n...\n\n### user\n...": readable for a person and easy for a script to
// split, and most models read markdown headings as turn markers.
std::string render_prompt(const std::vector<Message>& messages) {
  std::string text;
  for (const Message& message : messages) {
    if (!text.empty()) text += "\n\n";
    text += "### " + message.role + "\n" + message.content;
  }
  return text;
}

std::string format_number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

class CommandProvider : public Provider {
 public:
  explicit CommandProvider(const ProviderConfig& config)
      : config_(config), label_("command `" + excerpt(config.command, 80) + "`"),
        slots_(config.max_concurrency) {}

  std::string describe() const override { return label_; }

  Reply complete(const Request& request) override {
    return with_purpose(request, [&] { return call(request); });
  }

 private:
  Reply call(const Request& request) {
    Command command;
    command.shell = config_.command;
    command.stdin_data = redact_secrets(render_prompt(request.messages));
    command.timeout_s = config_.timeout_s;
    // What an HTTP provider would send beside the prompt, for wrappers that forward it.
    command.env = {{"MAXCODE_LLM_PURPOSE", request.purpose},
                   {"MAXCODE_LLM_MODEL", config_.model},
                   {"MAXCODE_LLM_TEMPERATURE", format_number(temperature_for(request, config_))},
                   {"MAXCODE_LLM_MAX_TOKENS", std::to_string(max_tokens_for(request, config_))}};

    Outcome outcome;
    {
      Slots::Held slot(slots_);
      outcome = run(command);
    }
    if (!outcome.ok()) {
      std::string tail = outcome.tail(2000);
      throw LlmError(ErrorKind::kCommand, label_ + ": " + outcome.describe() +
                                              (tail.empty() ? "" : ":\n" + tail));
    }
    if (outcome.out.find_first_not_of(" \t\r\n") == std::string::npos) {
      throw LlmError(ErrorKind::kBadReply, label_ + ": printed nothing on standard output");
    }
    Reply reply;
    reply.text = std::move(outcome.out);
    reply.model = config_.model.empty() ? "command" : config_.model;
    reply.finish_reason = "stop";
    reply.latency_s = outcome.wall_s;
    return reply;
  }

  ProviderConfig config_;
  std::string label_;
  Slots slots_;
};

}  // namespace

std::unique_ptr<Provider> make_command_provider(const ProviderConfig& config) {
  if (config.command.empty()) {
    throw LlmError(ErrorKind::kConfig, "the command provider needs a command");
  }
  return std::make_unique<CommandProvider>(config);
}

}  // namespace maxcode::llm
