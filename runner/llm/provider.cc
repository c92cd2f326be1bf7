// make_provider and what all providers share.
#include "runner/llm/provider.h"

#include <signal.h>

#include <mutex>

#include "runner/llm/providers.h"
#include "runner/util/json_io.h"

namespace maxcode::llm {
namespace {

// OpenSSL writes to sockets with write(), not send(MSG_NOSIGNAL): a server that drops a
// TLS connection mid-request would kill maxcode with SIGPIPE instead of failing the
// call. Children are unaffected: runner/util/process.cc resets every signal before exec.
void ignore_sigpipe_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction current {};
    if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
      signal(SIGPIPE, SIG_IGN);
    }
  });
}

}  // namespace

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kAuth:
      return "auth";
    case ErrorKind::kRateLimited:
      return "rate_limited";
    case ErrorKind::kServer:
      return "server";
    case ErrorKind::kConnection:
      return "connection";
    case ErrorKind::kTimeout:
      return "timeout";
    case ErrorKind::kBadReply:
      return "bad_reply";
    case ErrorKind::kRefusal:
      return "refusal";
    case ErrorKind::kCommand:
      return "command";
    case ErrorKind::kConfig:
      return "config";
  }
  return "unknown";
}

Usage priced_usage(long input_tokens, long output_tokens, const Price& price) {
  Usage usage;
  usage.input_tokens = input_tokens;
  usage.output_tokens = output_tokens;
  usage.cost_usd = static_cast<double>(input_tokens) * price.input_per_mtok / 1e6 +
                   static_cast<double>(output_tokens) * price.output_per_mtok / 1e6;
  return usage;
}

double temperature_for(const Request& request, const ProviderConfig& config) {
  return request.temperature.value_or(config.temperature);
}

int max_tokens_for(const Request& request, const ProviderConfig& config) {
  return request.max_tokens.value_or(config.max_tokens);
}

std::string string_field(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return "";
  auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : "";
}

long count_field(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return 0;
  auto found = object.find(key);
  return found != object.end() && found->is_number() ? found->get<long>() : 0;
}

std::string dump_json(const nlohmann::json& value) {
  return ::maxcode::dump_json(value);
}

std::unique_ptr<Provider> make_provider(const ProviderConfig& config) {
  if (config.provider == "openai" || config.provider == "anthropic") {
    ignore_sigpipe_once();
    bool openai = config.provider == "openai";
    // parse_provider_config fills this in; a config built in code may leave it out.
    ProviderConfig filled = config;
    if (filled.base_url.empty()) {
      filled.base_url = openai ? "https://api.openai.com/v1" : "https://api.anthropic.com";
    }
    return openai ? make_openai_provider(filled) : make_anthropic_provider(filled);
  }
  if (config.provider == "command") return make_command_provider(config);
  throw LlmError(ErrorKind::kConfig, "unknown LLM provider '" + config.provider +
                                         "' (supported: openai, anthropic, command)");
}

}  // namespace maxcode::llm
