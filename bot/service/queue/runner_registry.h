// The runners the service has seen: their labels, when last heard from, and the job each
// holds (for the dashboard and /metrics).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bot/service/queue/store_access.h"

namespace maxcode::bot::service {

struct RunnerInfo {
  std::string name;
  std::vector<std::string> labels;
  double last_seen = 0;
  std::int64_t job_id = 0;
};

class RunnerRegistry {
 public:
  explicit RunnerRegistry(StoreAccess access) : access_(access) {}

  // A runner asked for work (with its labels).
  void seen(const std::string& name, const std::vector<std::string>& labels, std::int64_t job_id);
  // A heartbeat or a result: the runner is alive (its labels stay as it claimed with).
  void alive(const std::string& name, std::int64_t job_id);
  std::vector<RunnerInfo> list();

 private:
  StoreAccess access_;
};

}  // namespace maxcode::bot::service
