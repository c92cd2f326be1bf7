// When each scheduled sweep last ran, and which replica runs the one due now (leased
// for work_lease_s, so that one replica runs it).
#pragma once

#include <optional>
#include <string>

#include "bot/service/queue/store_access.h"

namespace maxcode::bot::service {

class ScheduleRuns {
 public:
  explicit ScheduleRuns(StoreAccess access) : access_(access) {}

  std::optional<double> last_run(const std::string& name);
  // Ends the lease too.
  void set_run(const std::string& name, double at);
  // The sweep of `name` due after `last_run` is this replica's to run for work_lease_s
  // (false: another replica runs it or ran it). set_run ends the lease.
  bool take_run(const std::string& name, double last_run);

 private:
  StoreAccess access_;
};

}  // namespace maxcode::bot::service
