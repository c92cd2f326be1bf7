#include "runner/evaluate/gpu/record_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace maxcode {

namespace fs = std::filesystem;

namespace {

// A summary of a run with tens of thousands of distinct kernels is a few megabytes;
// past this, the channel is being flooded.
constexpr std::size_t kMaxBuffered = 256u << 20;

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

}  // namespace

RecordSocket::RecordSocket(const std::string& parent) {
  std::string base = parent.empty() ? fs::temp_directory_path().string() : parent;
  // Short: a socket's path must fit in sockaddr_un (108 bytes).
  std::string templ = base + "/mxr-XXXXXX";
  if (!mkdtemp(templ.data())) throw std::runtime_error(errno_text("cannot create a directory in " + base));
  dir_ = templ;
  ::chmod(dir_.c_str(), 0755);
  path_ = dir_ + "/s";
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path_.size() >= sizeof address.sun_path) {
    ::rmdir(dir_.c_str());
    throw std::runtime_error("socket path " + path_ + " is longer than a Unix socket allows (" +
                             std::to_string(sizeof address.sun_path - 1) + " bytes): set TMPDIR to a shorter path");
  }
  std::strcpy(address.sun_path, path_.c_str());
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      ::chmod(path_.c_str(), 0777) != 0 || ::listen(listen_fd_, 64) != 0 || ::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
    const std::string error = errno_text("cannot listen on " + path_);
    if (listen_fd_ >= 0) ::close(listen_fd_);
    ::unlink(path_.c_str());
    ::rmdir(dir_.c_str());
    throw std::runtime_error(error);
  }
  thread_ = std::thread([this] { loop(); });
}

RecordSocket::~RecordSocket() {
  if (!finished_) finish(0);
}

void RecordSocket::accept_all() {
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;
    connections_.push_back({fd, {}, false, false, {}});
  }
}

void RecordSocket::take_line(Connection& c, const std::string& line) {
  if (c.sealed) {
    problems_.push_back("GPU records were sent on a process's channel after its final summary (code of the "
                        "benchmark wrote to maxcode's profiler socket)");
    return;
  }
  GpuSummary summary;
  try {
    summary = parse_gpu_summary(nlohmann::json::parse(line), "profiler socket");
  } catch (const std::exception& error) {
    problems_.push_back(std::string("a line on maxcode's profiler socket is not a GPU summary (the channel was "
                                    "written to by the benchmark?): ") +
                        error.what());
    return;
  }
  c.summary = std::move(summary);
  c.has_summary = true;
  c.sealed = c.summary.complete;
}

bool RecordSocket::read_from(Connection& c) {
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(c.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (n <= 0) return false;
    buffered_ += static_cast<std::size_t>(n);
    if (buffered_ > kMaxBuffered) {
      problems_.push_back("more than " + std::to_string(kMaxBuffered >> 20) +
                          " MiB arrived on maxcode's profiler socket: the channel was flooded");
      return false;
    }
    c.pending.append(buffer, static_cast<std::size_t>(n));
    std::size_t start = 0;
    for (std::size_t end; (end = c.pending.find('\n', start)) != std::string::npos; start = end + 1)
      take_line(c, c.pending.substr(start, end - start));
    c.pending.erase(0, start);
  }
}

void RecordSocket::loop() {
  using Clock = std::chrono::steady_clock;
  Clock::time_point deadline{};
  for (;;) {
    const bool draining = draining_.load();
    if (draining) {
      // The run is over: the connections still queued, then every stream to its end.
      if (deadline == Clock::time_point{})
        deadline = Clock::now() + std::chrono::milliseconds(static_cast<long>(drain_s_ * 1000));
      accept_all();
      bool open = false;
      for (const Connection& c : connections_) open = open || c.fd >= 0;
      if (!open || Clock::now() >= deadline) return;
    }
    std::vector<pollfd> fds = {{wake_[0], POLLIN, 0}, {listen_fd_, POLLIN, 0}};
    for (const Connection& c : connections_)
      if (c.fd >= 0) fds.push_back({c.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), draining ? 50 : -1) < 0 && errno != EINTR) return;
    char byte;
    while (::read(wake_[0], &byte, 1) > 0) {
    }
    if (fds[1].revents & POLLIN) accept_all();
    for (Connection& c : connections_) {
      if (c.fd >= 0 && !read_from(c)) {
        ::close(c.fd);
        c.fd = -1;
      }
    }
  }
}

RecordStreams RecordSocket::finish(double drain_s) {
  if (!finished_) {
    finished_ = true;
    drain_s_ = drain_s;
    draining_ = true;
    const char byte = 1;
    ssize_t ignored = ::write(wake_[1], &byte, 1);
    (void)ignored;
    if (thread_.joinable()) thread_.join();
    for (Connection& c : connections_)
      if (c.fd >= 0) ::close(c.fd), c.fd = -1;
    ::close(listen_fd_);
    ::close(wake_[0]);
    ::close(wake_[1]);
    ::unlink(path_.c_str());
    ::rmdir(dir_.c_str());
  }
  RecordStreams out;
  out.problems = problems_;
  for (Connection& c : connections_) {
    if (!c.pending.empty())
      out.problems.push_back("a process's GPU summary on maxcode's profiler socket was cut short");
    if (c.has_summary) out.summaries.push_back(c.summary);
  }
  return out;
}

}  // namespace maxcode
