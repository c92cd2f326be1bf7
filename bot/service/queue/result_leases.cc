#include "bot/service/queue/result_leases.h"

#include "runner/util/hex.h"

namespace maxcode::bot::service {

std::optional<std::string> ResultLeases::take_results(std::int64_t id) {
  auto db = access_.pool.acquire();
  const double t = access_.now();
  const std::string lease = random_hex(16);
  // One statement: the row lock makes two replicas' takes one after the other, and the
  // second finds the lease held.
  if (db->run("UPDATE jobs SET lease = ?2, lease_expires = ?3 WHERE id = ?1 AND state = 'delivering' "
              "AND (lease = '' OR lease_expires < ?4)",
              {id, lease, t + access_.options.work_lease_s, t}) != 1)
    return std::nullopt;
  return lease;
}

bool ResultLeases::take_report(std::int64_t id) {
  auto db = access_.pool.acquire();
  const double t = access_.now();
  return db->run("UPDATE jobs SET report_until = ?2 WHERE id = ?1 AND report_until <= ?3",
                 {id, t + access_.options.work_lease_s, t}) == 1;
}

void ResultLeases::end_report(std::int64_t id) {
  auto db = access_.pool.acquire();
  db->run("UPDATE jobs SET report_until = 0 WHERE id = ?1", {id});
}

void ResultLeases::release_results(std::int64_t id, const std::string& lease) {
  auto db = access_.pool.acquire();
  db->run("UPDATE jobs SET lease = '', lease_expires = 0 WHERE id = ?1 AND state = 'delivering' AND lease = ?2",
          {id, lease});
}

}  // namespace maxcode::bot::service
