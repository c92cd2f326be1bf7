// The channel the CUPTI injection reports through while maxcode times a benchmark: a
// Unix socket maxcode listens on, in a directory of its own that the sandbox shows the
// benchmark read-only (Command::readable_paths), so the benchmark can neither replace
// the socket nor rewrite what was sent, as it could rewrite a file in its workspace.
//
// Each process connects once (runner/inject/cupti_injection.cc, MAXCODE_PROFILE_SOCKET)
// and sends its summaries as lines of JSON (runner/instrument/gpu_activity.h): the
// snapshots, then its final summary, marked complete, after which it shuts its side.
// A thread reads every connection as the lines arrive. Anything sent on a connection
// after its final summary, or a line that is not a summary, is tampering with the
// channel (code of the benchmark writing to the injection's socket) and is reported as
// a problem; the first final summary stands.
#pragma once

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "runner/instrument/gpu_activity.h"

namespace maxcode {

struct RecordStreams {
  std::vector<GpuSummary> summaries;  // per connection that sent any: the final one, else the last
  std::vector<std::string> problems;  // what was wrong on the channel
};

class RecordSocket {
 public:
  // Listens on a new socket in a new directory under `parent` (the temp directory when
  // empty). Throws std::runtime_error naming the path when it cannot.
  explicit RecordSocket(const std::string& parent = {});
  ~RecordSocket();
  RecordSocket(const RecordSocket&) = delete;
  RecordSocket& operator=(const RecordSocket&) = delete;

  const std::string& path() const { return path_; }  // MAXCODE_PROFILE_SOCKET
  const std::string& dir() const { return dir_; }    // read-only to the benchmark
  // Once the run has ended: takes the connections still waiting, reads every one to
  // its end (at most `drain_s` more), stops, and returns what arrived.
  RecordStreams finish(double drain_s = 2.0);

 private:
  struct Connection {
    int fd = -1;
    std::string pending;  // bytes after the last newline
    bool has_summary = false;
    bool sealed = false;  // the final summary arrived
    GpuSummary summary;
  };
  void loop();
  void accept_all();
  bool read_from(Connection& c);  // false at end of stream
  void take_line(Connection& c, const std::string& line);

  std::string dir_, path_;
  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  std::atomic<bool> draining_{false};
  double drain_s_ = 2.0;
  std::thread thread_;
  std::vector<Connection> connections_;  // the thread's own until it ends
  std::vector<std::string> problems_;
  std::size_t buffered_ = 0;
  bool finished_ = false;
};

}  // namespace maxcode
