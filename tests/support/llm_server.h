// A real HTTP(S) server on 127.0.0.1 that plays an LLM API for tests: it answers each
// path from a script of replies (status, headers, body, delay) and records every request
// so tests can assert what the client sent. Nothing in the client is mocked: it speaks
// HTTP over a socket to this server exactly as it would to the real service.
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace maxcode::testing {

struct ScriptedReply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  double delay_s = 0;  // before answering; kNever for a server that never answers

  static constexpr double kNever = 3600;
};

struct RecordedRequest {
  std::string method;
  std::string path;
  httplib::Headers headers;  // names compare case-insensitively
  std::string body;
  std::chrono::steady_clock::time_point received;

  std::string header(const std::string& name) const;
  bool has_header(const std::string& name) const { return headers.count(name) > 0; }
  nlohmann::json json() const { return nlohmann::json::parse(body); }
};

class LlmServer {
 public:
  enum class Tls { kOff, kSelfSigned };
  explicit LlmServer(Tls tls = Tls::kOff);
  ~LlmServer();
  LlmServer(const LlmServer&) = delete;
  LlmServer& operator=(const LlmServer&) = delete;

  // "http://127.0.0.1:PORT" (or https://): a base_url without a path prefix.
  std::string url() const;
  int port() const { return port_; }

  // Replies to requests for `path`, in order; the last one repeats for ever after.
  // A path without a script answers 404 with an OpenAI-style error body.
  void script(const std::string& path, std::vector<ScriptedReply> replies);

  std::vector<RecordedRequest> requests() const;
  // Most requests that were being answered at the same moment.
  int max_in_flight() const;

 private:
  void handle(const httplib::Request& request, httplib::Response& response);
  ScriptedReply next_reply(const std::string& path);

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  bool tls_ = false;

  mutable std::mutex mutex_;
  std::condition_variable stopping_cv_;
  bool stopping_ = false;
  std::map<std::string, std::vector<ScriptedReply>> scripts_;
  std::map<std::string, std::size_t> served_;
  std::vector<RecordedRequest> requests_;
  int in_flight_ = 0;
  int max_in_flight_ = 0;
};

// The text of tests/fixtures/llm/<name>.
std::string llm_fixture(const std::string& name);

// A JSON reply whose body is the fixture file, byte for byte.
ScriptedReply fixture_reply(const std::string& name, int status = 200);

// Sets an environment variable for the lifetime of the object (unset when `value` is
// null), restoring what was there before.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const char* value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  bool had_ = false;
  std::string old_;
};

}  // namespace maxcode::testing
