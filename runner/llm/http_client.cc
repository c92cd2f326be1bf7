#include "runner/llm/http_client.h"

#include <httplib.h>
#include <openssl/x509.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stop_token>
#include <thread>

#include "runner/llm/redact.h"
#include "runner/util/secrets.h"
#include "runner/llm/retry.h"
#include "runner/util/json_io.h"

namespace maxcode::llm {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr const char* kCaBundle = "/etc/ssl/certs/ca-certificates.crt";

bool is_json_type(const std::string& content_type) {
  return content_type.find("json") != std::string::npos;
}

// cpp-httplib's names for transport errors ("Connection", "Read") as a sentence part.
std::string transport_problem(httplib::Error error) {
  switch (error) {
    case httplib::Error::Connection:
      return "could not connect (refused, unreachable or unknown host)";
    case httplib::Error::Read:
      return "the connection closed before a complete reply";
    case httplib::Error::Write:
      return "the connection failed while sending the request";
    case httplib::Error::SSLConnection:
      return "the TLS handshake failed";
    default:
      return "request failed (" + httplib::to_string(error) + ")";
  }
}

std::string format_seconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", seconds);
  return text;
}

}  // namespace

struct HttpClient::Attempt {
  httplib::Error error = httplib::Error::Unknown;
  bool timed_out = false;  // the per-attempt limit ran out
  long verify_result = X509_V_OK;
  int status = 0;
  std::string content_type;
  std::string retry_after;
  std::string retry_after_ms;
  std::string body;
};

struct HttpClient::Verdict {
  ErrorKind kind = ErrorKind::kBadReply;
  std::string message;
  bool retry = false;
  std::optional<double> requested_wait_s;
};

// A body as JSON, or a discarded value when it is not. Through the strict reader's depth
// limit: a body nested a million deep (a hostile or broken endpoint) is refused here,
// not left to overflow the stack of whatever walks or prints it later.
json parse_body(const std::string& body, std::string* problem = nullptr) {
  try {
    return parse_json_input(body, "reply", {.unique_keys = false});
  } catch (const JsonInputError& e) {
    if (problem) *problem = e.what();
    return json(json::value_t::discarded);
  }
}

std::string server_message(const std::string& body, const std::string& content_type) {
  json parsed = parse_body(body);
  if (parsed.is_discarded()) {
    std::string type = content_type.empty() ? "no content type" : content_type;
    return "expected JSON, got " + type + ": " + excerpt(body);
  }
  auto text_of = [](const json& value, const char* key) -> std::string {
    auto found = value.find(key);
    return found != value.end() && found->is_string() ? found->get<std::string>() : "";
  };
  if (parsed.is_object()) {
    auto error = parsed.find("error");
    if (error != parsed.end() && error->is_string()) return excerpt(error->get<std::string>(), 500);
    if (error != parsed.end() && error->is_object()) {
      std::string message = text_of(*error, "message");
      std::string tag = text_of(*error, "code");
      if (tag.empty()) tag = text_of(*error, "type");
      if (!message.empty()) return excerpt(message, 500) + (tag.empty() ? "" : " [" + tag + "]");
    }
    if (std::string message = text_of(parsed, "message"); !message.empty()) {
      return excerpt(message, 500);
    }
  }
  return excerpt(body);
}

HttpClient::HttpClient(const ProviderConfig& config, std::string label)
    : config_(config),
      label_(std::move(label)),
      slots_(config.max_concurrency),
      random_(std::random_device{}()) {
  std::string problem = parse_endpoint(config.base_url, endpoint_);
  if (!problem.empty()) {
    throw LlmError(ErrorKind::kConfig, label_ + ": base_url: " + problem);
  }
}

std::string HttpClient::api_key() const {
  if (config_.api_key_env.empty()) return "";
  if (config_.api_key.empty()) {
    throw LlmError(ErrorKind::kConfig,
                   label_ + ": the API key variable " + config_.api_key_env + " is not set");
  }
  return config_.api_key;
}

HttpClient::Attempt HttpClient::send_once(const std::string& path, const HeaderList& headers,
                                          const std::string& body) const {
  httplib::Client client(endpoint_.origin);
  if (endpoint_.https) {
    client.enable_server_certificate_verification(true);
    std::error_code ec;
    // Without the bundle cpp-httplib falls back to OpenSSL's default paths.
    if (std::filesystem::exists(kCaBundle, ec)) client.set_ca_cert_path(kCaBundle);
  }
  double limit = config_.timeout_s;
  auto seconds = static_cast<time_t>(limit);
  auto micros = static_cast<time_t>((limit - std::floor(limit)) * 1e6);
  client.set_connection_timeout(seconds, micros);
  client.set_read_timeout(seconds, micros);
  client.set_write_timeout(seconds, micros);
  client.set_keep_alive(false);

  httplib::Headers sent(headers.begin(), headers.end());
  sent.emplace("User-Agent", "maxcode");
  sent.emplace("Accept", "application/json");

  // The socket timeouts bound each read, not the reply: a server that trickles bytes
  // would never trip them. This watchdog ends the attempt when its time is up.
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(limit));
  std::atomic<bool> fired{false};
  Attempt attempt;
  {
    std::jthread watchdog([&](std::stop_token stop) {
      std::mutex mutex;
      std::condition_variable_any wake;
      std::unique_lock lock(mutex);
      wake.wait_until(lock, stop, deadline, [] { return false; });
      if (!stop.stop_requested()) {
        fired = true;
        client.stop();
      }
    });
    httplib::Result result = client.Post(endpoint_.prefix + path, sent, body, "application/json");
    attempt.error = result.error();
    if (result) {
      attempt.status = result->status;
      attempt.content_type = result->get_header_value("Content-Type");
      attempt.retry_after = result->get_header_value("retry-after");
      attempt.retry_after_ms = result->get_header_value("retry-after-ms");
      attempt.body = std::move(result->body);
    }
  }
  if (attempt.status == 0) {
    attempt.timed_out = fired || attempt.error == httplib::Error::ConnectionTimeout ||
                        // A read that timed out looks like any failed read; time tells.
                        (attempt.error == httplib::Error::Read && Clock::now() >= deadline -
                             std::chrono::milliseconds(50));
    if (endpoint_.https) attempt.verify_result = client.get_openssl_verify_result();
  }
  return attempt;
}

HttpClient::Verdict HttpClient::judge(const Attempt& attempt, const std::string& path) const {
  Verdict verdict;
  std::string where = "POST " + endpoint_.url(path);
  if (attempt.status == 0) {
    if (attempt.timed_out) {
      // Not retried: the attempt already used the whole limit, and a server that hangs
      // once usually hangs again.
      verdict.kind = ErrorKind::kTimeout;
      verdict.message = "no complete reply within " + format_seconds(config_.timeout_s) +
                        " (timeout_s) from " + where;
      return verdict;
    }
    verdict.kind = ErrorKind::kConnection;
    bool certificate = attempt.error == httplib::Error::SSLServerVerification ||
                       attempt.error == httplib::Error::SSLLoadingCerts ||
                       (attempt.error == httplib::Error::SSLConnection &&
                        attempt.verify_result != X509_V_OK);
    if (certificate) {
      // Not retried: a certificate does not become trustworthy by asking again.
      std::string reason = attempt.verify_result != X509_V_OK
                               ? X509_verify_cert_error_string(attempt.verify_result)
                               : httplib::to_string(attempt.error);
      verdict.message = "TLS certificate verification failed for " + endpoint_.origin + " (" +
                        reason + ")";
      return verdict;
    }
    verdict.message = transport_problem(attempt.error) + ": " + where;
    verdict.retry = true;
    return verdict;
  }

  std::string status = "HTTP " + std::to_string(attempt.status);
  std::string message = server_message(attempt.body, attempt.content_type);
  if (attempt.status == 401 || attempt.status == 403) {
    verdict.kind = ErrorKind::kAuth;
    std::string hint = config_.api_key_env.empty()
                           ? "the server wants a key: name its variable in api_key_env"
                           : "check " + config_.api_key_env;
    verdict.message = status + ": " + message + " (" + hint + ")";
  } else if (retryable_status(attempt.status)) {
    verdict.kind = attempt.status == 429 ? ErrorKind::kRateLimited : ErrorKind::kServer;
    verdict.message = status + (attempt.status == 429 ? " (rate limited)" : "") + ": " + message;
    verdict.retry = true;
    verdict.requested_wait_s = requested_wait_s(attempt.retry_after_ms, attempt.retry_after,
                                                std::chrono::system_clock::now());
  } else if (attempt.status == 404) {
    verdict.kind = ErrorKind::kConfig;
    verdict.message = status + " for " + where + ": " + message + " (check base_url and model)";
  } else {
    verdict.kind = ErrorKind::kBadReply;
    verdict.message = status + " for " + where + ": " + message;
  }
  return verdict;
}

double HttpClient::next_wait_s(int retry) {
  std::lock_guard lock(random_mutex_);
  return backoff_s(retry, random_);
}

JsonReply HttpClient::post_json(const std::string& path, const HeaderList& headers,
                                const std::string& request_body, const std::string& key) {
  // Every prompt to a model passes here: it carries no secret this process holds, even
  // one a candidate's output or a tool's error message brought into it.
  const std::string body = redact_secrets(request_body);
  auto error = [&](ErrorKind kind, const std::string& message, Retryable retryable = Retryable::kNo) {
    return LlmError(kind, redact_secrets(redact(label_ + ": " + message, key)), retryable);
  };
  for (int attempt_number = 1;; ++attempt_number) {
    Attempt attempt;
    {
      // Held for the attempt only: a call waiting out a backoff leaves its slot to others.
      Slots::Held slot(slots_);
      attempt = send_once(path, headers, body);
    }
    if (attempt.status >= 200 && attempt.status < 300) {
      JsonReply reply;
      std::string invalid;
      reply.body = parse_body(attempt.body, &invalid);
      if (reply.body.is_discarded()) {
        std::string problem = is_json_type(attempt.content_type)
                                  ? "invalid JSON (" + invalid + "): " + excerpt(attempt.body)
                                  : server_message(attempt.body, attempt.content_type);
        throw error(ErrorKind::kBadReply, "HTTP " + std::to_string(attempt.status) + ": " + problem);
      }
      reply.attempts = attempt_number;
      return reply;
    }

    Verdict verdict = judge(attempt, path);
    if (verdict.retry && attempt_number <= config_.max_retries) {
      double wait = verdict.requested_wait_s.value_or(next_wait_s(attempt_number));
      if (wait > config_.max_retry_wait_s) {
        throw error(verdict.kind,
                    verdict.message + " (the server asks to wait " + format_seconds(std::round(wait)) +
                        ", more than max_retry_wait_s " + format_seconds(config_.max_retry_wait_s) + "; giving up)",
                    Retryable::kYes);
      }
      std::this_thread::sleep_for(std::chrono::duration<double>(wait));
      continue;
    }
    if (verdict.retry) {
      verdict.message += " (after " + std::to_string(attempt_number) +
                         (attempt_number == 1 ? " attempt)" : " attempts)");
    }
    throw error(verdict.kind, verdict.message, verdict.retry ? Retryable::kYes : Retryable::kNo);
  }
}

}  // namespace maxcode::llm
