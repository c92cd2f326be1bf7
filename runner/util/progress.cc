#include "runner/util/progress.h"

#include <unistd.h>

namespace maxcode {

Progress::Progress(std::FILE* stream, bool quiet)
    : stream_(stream), terminal_(isatty(fileno(stream)) != 0), quiet_(quiet) {}

Progress::~Progress() {
  if (line_open_) std::fputc('\n', stream_);
}

void Progress::status(const std::string& line) {
  if (quiet_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (terminal_) {
    // Clear the line and rewrite it, truncated so it never wraps.
    std::fprintf(stream_, "\r\033[K%.*s", 120, line.c_str());
    line_open_ = true;
  } else {
    // A log gets a status line at most every few seconds; notes always appear.
    const auto now = std::chrono::steady_clock::now();
    if (now - last_status_ < std::chrono::seconds(5)) return;
    last_status_ = now;
    std::fprintf(stream_, "%s\n", line.c_str());
  }
  std::fflush(stream_);
}

void Progress::note(const std::string& line) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (line_open_) {
    std::fputs("\r\033[K", stream_);
    line_open_ = false;
  }
  std::fprintf(stream_, "%s\n", line.c_str());
  std::fflush(stream_);
}

}  // namespace maxcode
