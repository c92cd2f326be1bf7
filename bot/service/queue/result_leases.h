// Work on a job that takes time outside the store, leased on the job's row so that one
// replica does it, and another after the lease runs out if that one died: delivering a
// job's results (the row's lease, while it is delivering) and bringing its comment and
// check run up to date (report_until). The jobs table is job_queue.h's; these only
// take and give back the leases.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "bot/service/queue/store_access.h"

namespace maxcode::bot::service {

class ResultLeases {
 public:
  explicit ResultLeases(StoreAccess access) : access_(access) {}

  // A delivering job whose results no replica is delivering: leased to this one for
  // work_lease_s; returns the lease (nullopt: another holds it, or it is not delivering).
  std::optional<std::string> take_results(std::int64_t id);
  // A job's comment and check run are brought up to date by one replica at a time (two
  // that both saw no check run would each create one): true when this one may report
  // now (for work_lease_s, or until end_report); false while another reports it.
  bool take_report(std::int64_t id);
  void end_report(std::int64_t id);
  // Gives the results' lease back (delivery deferred: GitHub asked for time).
  void release_results(std::int64_t id, const std::string& lease);

 private:
  StoreAccess access_;
};

}  // namespace maxcode::bot::service
