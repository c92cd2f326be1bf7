#include "bot/service/operations/service_log.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>

namespace maxcode::bot::service {

ServiceLog::ServiceLog(std::function<void(const std::string&)> sink) : sink_(std::move(sink)) {}

void ServiceLog::operator()(const std::string& component, const std::string& message) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const int ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[64];
  std::snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
  const std::string line = std::string(stamp) + " " + component + ": " + message;
  std::lock_guard lock(mutex_);
  if (sink_) sink_(line);
  else std::cerr << line << std::endl;
}

}  // namespace maxcode::bot::service
