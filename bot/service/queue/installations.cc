#include "bot/service/queue/installations.h"

#include <algorithm>

#include "runner/util/json_io.h"

namespace maxcode::bot::service {

using nlohmann::json;

void Installations::set(const std::string& id, const std::string& account, const std::string& state,
                        const json& repos) {
  auto db = access_.pool.acquire();
  db->run(
      "INSERT INTO installations(id, account, state, repos, updated_at) VALUES(?1, ?2, ?3, ?4, ?5) "
      "ON CONFLICT(id) DO UPDATE SET account = ?2, state = ?3, repos = CASE WHEN ?4 = 'null' THEN installations.repos "
      "ELSE ?4 END, "
      "updated_at = ?5",
      {id, account, state, dump_json(repos), access_.now()});
  if (state == "deleted" || state == "suspended") {
    // Nothing may run for an installation that is gone or suspended.
    db->run(
        "UPDATE jobs SET state = 'cancelled', outcome = 'cancelled', summary = ?2, finished_at = ?3 "
        "WHERE installation_id = ?1 AND state = 'queued'",
        {id, "the App installation was " + state, access_.now()});
  }
}

void Installations::add_repos(const std::string& id, const json& added, const json& removed) {
  auto db = access_.pool.acquire();
  SqlTransaction tx(*db);
  // Read, change and write back the list: two replicas handling two events of one
  // installation must not each write their own change over the other's.
  db->serialize("maxcode installation " + id);
  json repos = json::array();
  db->run("SELECT repos FROM installations WHERE id = ?1", {id}, [&](const SqlRow& r) {
    repos = json::parse(r.text(0), nullptr, false);
    if (!repos.is_array()) repos = json::array();
  });
  json next = json::array();
  for (const auto& r : repos)
    if (std::find(removed.begin(), removed.end(), r) == removed.end()) next.push_back(r);
  for (const auto& r : added)
    if (std::find(next.begin(), next.end(), r) == next.end()) next.push_back(r);
  db->run(
      "INSERT INTO installations(id, account, state, repos, updated_at) VALUES(?1, '', 'active', ?2, ?3) "
      "ON CONFLICT(id) DO UPDATE SET repos = ?2, updated_at = ?3",
      {id, dump_json(next), access_.now()});
  for (const auto& r : removed)
    if (r.is_string())
      db->run(
          "UPDATE jobs SET state = 'cancelled', outcome = 'cancelled', summary = 'the repository was removed from "
          "the App installation', finished_at = ?3 WHERE installation_id = ?1 AND repo = ?2 AND state = 'queued'",
          {id, r.get<std::string>(), access_.now()});
  tx.commit();
}

std::optional<std::string> Installations::state(const std::string& id) {
  auto db = access_.pool.acquire();
  std::optional<std::string> state;
  db->run("SELECT state FROM installations WHERE id = ?1", {id}, [&](const SqlRow& r) { state = r.text(0); });
  return state;
}

std::vector<std::string> Installations::repos(const std::string& id) {
  auto db = access_.pool.acquire();
  std::vector<std::string> out;
  db->run("SELECT repos FROM installations WHERE id = ?1 AND state = 'active'", {id}, [&](const SqlRow& r) {
    const json repos = json::parse(r.text(0), nullptr, false);
    if (repos.is_array())
      for (const auto& name : repos)
        if (name.is_string()) out.push_back(name);
  });
  return out;
}

std::optional<std::string> Installations::for_repo(const std::string& repo) {
  auto db = access_.pool.acquire();
  std::optional<std::string> found;
  db->run("SELECT id, repos FROM installations WHERE state = 'active' ORDER BY updated_at DESC", {},
          [&](const SqlRow& r) {
            const json repos = json::parse(r.text(1), nullptr, false);
            if (!found && repos.is_array() && std::find(repos.begin(), repos.end(), json(repo)) != repos.end())
              found = r.text(0);
          });
  return found;
}

}  // namespace maxcode::bot::service
