// The service's log: one line per event, with a UTC timestamp and a component, to
// stderr (journald takes it from there). Thread-safe. Secrets never reach it: tokens
// and webhook bodies are not logged.
#pragma once

#include <functional>
#include <mutex>
#include <string>

namespace maxcode::bot::service {

class ServiceLog {
 public:
  // `sink` receives each finished line (without newline); default: stderr.
  explicit ServiceLog(std::function<void(const std::string&)> sink = nullptr);
  void operator()(const std::string& component, const std::string& message);

 private:
  std::function<void(const std::string&)> sink_;
  std::mutex mutex_;
};

}  // namespace maxcode::bot::service
