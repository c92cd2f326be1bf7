#include "bot/service/intake/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

namespace maxcode::bot::service {

namespace {

using Clock = std::chrono::steady_clock;

Clock::duration seconds(double s) { return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)); }

// poll() for `events` until `until`; > 0 ready, 0 timed out, < 0 error.
int wait_for(int fd, short events, Clock::time_point until) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::clamp<long long>(left, 0, 60'000)));
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 && Clock::now() < until) continue;  // a wait longer than a minute, in steps
    if (n > 0 && (p.revents & (POLLERR | POLLNVAL))) return -1;
    return n;
  }
}

std::string address_text(const sockaddr_storage& a, int& port) {
  char text[INET6_ADDRSTRLEN] = "";
  if (a.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(a);
    inet_ntop(AF_INET, &v4.sin_addr, text, sizeof text);
    port = ntohs(v4.sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(a);
    inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof text);
    port = ntohs(v6.sin6_port);
  }
  return text;
}

// A socket stream whose reads end at a deadline that the connection loop sets per
// request (httplib's own SocketStream only bounds each read, so a byte every few seconds
// keeps it reading for hours). Buffered: httplib reads the request line a byte at a time.
class DeadlineStream final : public httplib::Stream {
 public:
  DeadlineStream(int fd, Clock::duration write_timeout) : fd_(fd), write_timeout_(write_timeout) {}

  void set_read_deadline(Clock::time_point t) { read_deadline_ = t; }
  bool buffered() const { return begin_ < end_; }
  // Waits until a request starts (a byte to read) or `until`.
  bool wait_for_request(Clock::time_point until) { return buffered() || wait_for(fd_, POLLIN, until) > 0; }

  bool is_readable() const override { return buffered() || wait_for(fd_, POLLIN, read_deadline_) > 0; }
  bool is_writable() const override { return wait_for(fd_, POLLOUT, Clock::now() + write_timeout_) > 0; }

  ssize_t read(char* ptr, std::size_t size) override {
    if (!buffered()) {
      if (!is_readable()) return -1;  // the deadline passed
      ssize_t n;
      do n = ::recv(fd_, buffer_.data(), buffer_.size(), 0);
      while (n < 0 && errno == EINTR);
      if (n <= 0) return n;
      begin_ = 0;
      end_ = static_cast<std::size_t>(n);
    }
    const std::size_t count = std::min(size, end_ - begin_);
    std::memcpy(ptr, buffer_.data() + begin_, count);
    begin_ += count;
    return static_cast<ssize_t>(count);
  }

  ssize_t write(const char* ptr, std::size_t size) override {
    if (!is_writable()) return -1;
    ssize_t n;
    do n = ::send(fd_, ptr, size, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage a{};
    socklen_t length = sizeof a;
    if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&a), &length) == 0) ip = address_text(a, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage a{};
    socklen_t length = sizeof a;
    if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &length) == 0) ip = address_text(a, port);
  }
  socket_t socket() const override { return fd_; }

 private:
  int fd_;
  Clock::duration write_timeout_;
  Clock::time_point read_deadline_ = Clock::now();
  std::array<char, 4096> buffer_{};
  std::size_t begin_ = 0, end_ = 0;
};

}  // namespace

// --- the pool ----------------------------------------------------------------------------

struct ElasticThreadPool::State {
  std::size_t min_threads, max_threads;
  std::chrono::milliseconds idle;
  mutable std::mutex mutex;
  std::condition_variable work, ended;
  std::deque<std::function<void()>> jobs;
  std::size_t live = 0, waiting = 0;
  bool stopping = false;

  // Each thread holds the state (shared_ptr), so a pool destroyed early cannot pull it away.
  static void run(std::shared_ptr<State> s) {
    std::unique_lock lock(s->mutex);
    for (;;) {
      ++s->waiting;
      const bool woken = s->work.wait_for(lock, s->idle, [&] { return !s->jobs.empty() || s->stopping; });
      --s->waiting;
      if (s->jobs.empty()) {
        if (s->stopping || (!woken && s->live > s->min_threads)) break;
        continue;
      }
      std::function<void()> fn = std::move(s->jobs.front());
      s->jobs.pop_front();
      lock.unlock();
      try {
        fn();
      } catch (...) {  // httplib's tasks do not throw; a stray exception must not end the process
      }
      lock.lock();
    }
    if (--s->live == 0) s->ended.notify_all();
  }
};

ElasticThreadPool::ElasticThreadPool(std::size_t min_threads, std::size_t max_threads, std::chrono::milliseconds idle)
    : state_(std::make_shared<State>()) {
  state_->min_threads = min_threads;
  state_->max_threads = std::max<std::size_t>(max_threads, 1);
  state_->idle = idle;
}

ElasticThreadPool::~ElasticThreadPool() { shutdown(); }

void ElasticThreadPool::enqueue(std::function<void()> fn) {
  std::lock_guard lock(state_->mutex);
  state_->jobs.push_back(std::move(fn));
  if (state_->waiting < state_->jobs.size() && state_->live < state_->max_threads) {
    ++state_->live;
    std::thread(State::run, state_).detach();
  } else {
    state_->work.notify_one();
  }
}

void ElasticThreadPool::shutdown() {
  std::unique_lock lock(state_->mutex);
  state_->stopping = true;
  state_->work.notify_all();
  // The jobs left are run first (each is an accepted socket that must be closed).
  state_->ended.wait(lock, [&] { return state_->live == 0; });
}

std::size_t ElasticThreadPool::threads() const {
  std::lock_guard lock(state_->mutex);
  return state_->live;
}

httplib::TaskQueue* new_elastic_task_queue(const HttpLimits& limits) {
  return new ElasticThreadPool(8, limits.max_connections, std::chrono::seconds(30));
}

// --- the server --------------------------------------------------------------------------

HttpServer::HttpServer(HttpLimits limits) : limits_(limits) {
  new_task_queue = [limits] { return new_elastic_task_queue(limits); };
}

void HttpServer::widen_backlog() {
  // listen() again on a listening socket only changes its backlog (Linux, BSD).
  if (svr_sock_ != INVALID_SOCKET) ::listen(svr_sock_, SOMAXCONN);
}

bool HttpServer::process_and_close_socket(socket_t sock) {
  DeadlineStream stream(sock, std::chrono::seconds(write_timeout_sec_) + std::chrono::microseconds(write_timeout_usec_));
  bool ok = false;
  for (std::size_t left = std::max<std::size_t>(keep_alive_max_count_, 1); left > 0 && svr_sock_ != INVALID_SOCKET; --left) {
    // A connection waits for its (next) request at most keep_alive_s; the request then
    // has header_timeout_s for its line and headers and request_timeout_s in all.
    if (!stream.wait_for_request(Clock::now() + seconds(limits_.keep_alive_s))) break;
    const auto start = Clock::now();
    stream.set_read_deadline(start + seconds(std::min(limits_.header_timeout_s, limits_.request_timeout_s)));
    bool closed = false;
    ok = process_request(stream, left == 1, closed, [&](httplib::Request&) {
      stream.set_read_deadline(start + seconds(limits_.request_timeout_s));  // headers read: now the body
    });
    if (!ok || closed) break;
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

}  // namespace maxcode::bot::service
