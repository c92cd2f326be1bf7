// Progress for long runs: one updating line on a terminal, plain lines elsewhere (CI
// logs, files), so a user always sees what maxcode is doing and how far it got.
#pragma once

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>

namespace maxcode {

class Progress {
 public:
  explicit Progress(std::FILE* stream = stderr, bool quiet = false);
  ~Progress();
  // Replaces the current status line (terminal) or prints it (elsewhere).
  void status(const std::string& line);
  // A line that stays: results, warnings.
  void note(const std::string& line);

 private:
  std::FILE* stream_;
  bool terminal_;
  bool quiet_;
  bool line_open_ = false;
  std::chrono::steady_clock::time_point last_status_{};
  std::mutex mutex_;
};

}  // namespace maxcode
