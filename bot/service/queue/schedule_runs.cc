#include "bot/service/queue/schedule_runs.h"

namespace maxcode::bot::service {

std::optional<double> ScheduleRuns::last_run(const std::string& name) {
  auto db = access_.pool.acquire();
  std::optional<double> at;
  db->run("SELECT last_run FROM schedule_runs WHERE name = ?1", {name}, [&](const SqlRow& r) { at = r.real(0); });
  return at;
}

void ScheduleRuns::set_run(const std::string& name, double at) {
  auto db = access_.pool.acquire();
  db->run(
      "INSERT INTO schedule_runs(name, last_run) VALUES(?1, ?2) "
      "ON CONFLICT(name) DO UPDATE SET last_run = ?2, taken_until = 0",
      {name, at});
}

bool ScheduleRuns::take_run(const std::string& name, double last_run) {
  auto db = access_.pool.acquire();
  const double t = access_.now();
  // last_run in the WHERE: a replica that read it before another ran the sweep finds it
  // changed; taken_until: one running it now holds it.
  return db->run("UPDATE schedule_runs SET taken_until = ?3 WHERE name = ?1 AND last_run = ?2 AND taken_until <= ?4",
                 {name, last_run, t + access_.options.work_lease_s, t}) == 1;
}

}  // namespace maxcode::bot::service
