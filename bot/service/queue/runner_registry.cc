#include "bot/service/queue/runner_registry.h"

namespace maxcode::bot::service {

void RunnerRegistry::seen(const std::string& name, const std::vector<std::string>& labels, std::int64_t job_id) {
  auto db = access_.pool.acquire();
  db->run(
      "INSERT INTO runners(name, labels, last_seen, job_id) VALUES(?1, ?2, ?3, ?4) "
      "ON CONFLICT(name) DO UPDATE SET labels = ?2, last_seen = ?3, job_id = ?4",
      {name, join_labels(labels), access_.now(), job_id});
}

void RunnerRegistry::alive(const std::string& name, std::int64_t job_id) {
  auto db = access_.pool.acquire();
  db->run("UPDATE runners SET last_seen = ?2, job_id = ?3 WHERE name = ?1", {name, access_.now(), job_id});
}

std::vector<RunnerInfo> RunnerRegistry::list() {
  auto db = access_.pool.acquire();
  std::vector<RunnerInfo> out;
  db->run("SELECT name, labels, last_seen, job_id FROM runners ORDER BY name", {}, [&](const SqlRow& r) {
    out.push_back({r.text(0), split_labels(r.text(1)), r.real(2), r.integer(3)});
  });
  return out;
}

}  // namespace maxcode::bot::service
