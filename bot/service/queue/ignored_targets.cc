#include "bot/service/queue/ignored_targets.h"

namespace maxcode::bot::service {

void IgnoredTargets::add(const std::string& repo, const std::string& branch, const std::string& head_sha) {
  auto db = access_.pool.acquire();
  db->run(
      "INSERT INTO ignored_targets(repo, branch, head_sha, at) VALUES(?1, ?2, ?3, ?4) "
      "ON CONFLICT(repo, branch) DO UPDATE SET head_sha = ?3, at = ?4",
      {repo, branch, head_sha, access_.now()});
}

bool IgnoredTargets::contains(const std::string& repo, const std::string& branch) {
  auto db = access_.pool.acquire();
  bool found = false;
  db->run("SELECT 1 FROM ignored_targets WHERE repo = ?1 AND branch = ?2", {repo, branch},
          [&](const SqlRow&) { found = true; });
  return found;
}

}  // namespace maxcode::bot::service
