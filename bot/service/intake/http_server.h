// The service's HTTP server: cpp-httplib's Server with two defences against clients
// that connect and then dawdle (slowloris), which in httplib 0.11 hold a thread each for
// as long as they send a byte now and then (its read timeout is per read, not per
// request) and so could take every thread from /healthz and GitHub's webhooks:
//
//   deadlines       a request's line and headers must arrive within header_timeout_s
//                   of the first byte awaited, its body within request_timeout_s of
//                   the same moment; past either the connection is closed. Idle
//                   keep-alive connections are closed after keep_alive_s. The time a
//                   handler takes (a runner's long poll) is not bounded here.
//   elastic pool    a thread per connection being served, started on demand up to
//                   max_connections and ended after a while idle; connections beyond
//                   that wait in the queue for at most header_timeout_s each.
//
// So N slow clients hold at most N threads for at most header_timeout_s each, and the
// listening socket's backlog is raised from httplib's 5 to SOMAXCONN so that a burst of
// connections is not refused before it is accepted. TLS (SSLServer) gets the pool but
// not the deadlines (httplib's TLS stream is not public): run TLS in a proxy in front.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <stdexcept>

#include <httplib.h>

#include "bot/service/service_config.h"
#include "runner/util/error.h"

namespace maxcode::bot::service {


// Thrown by a handler for a request it cannot take (a malformed body): answered 400 with
// {"error": what()} by the server's exception handler (server.cc).
class BadRequest : public Error {
 public:
  using Error::Error;
};

// A task queue for httplib that starts a thread when none is idle, up to `max_threads`,
// keeps `min_threads` and ends others after `idle` without work.
class ElasticThreadPool : public httplib::TaskQueue {
 public:
  ElasticThreadPool(std::size_t min_threads, std::size_t max_threads, std::chrono::milliseconds idle);
  ~ElasticThreadPool() override;
  void enqueue(std::function<void()> fn) override;
  void shutdown() override;
  std::size_t threads() const;  // alive now

 private:
  struct State;
  std::shared_ptr<State> state_;
};

class HttpServer : public httplib::Server {
 public:
  explicit HttpServer(HttpLimits limits);
  // After bind_to_port / bind_to_any_port: a backlog that a burst of connections fits.
  void widen_backlog();

 private:
  bool process_and_close_socket(socket_t sock) override;
  HttpLimits limits_;
};

// The task queue both servers (plain and TLS) use.
httplib::TaskQueue* new_elastic_task_queue(const HttpLimits& limits);

}  // namespace maxcode::bot::service
