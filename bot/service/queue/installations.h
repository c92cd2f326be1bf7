// The GitHub App's installations: their state and repositories, as the installation
// events said. An installation deleted or suspended, or a repository removed from one,
// cancels its queued jobs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bot/service/queue/store_access.h"

namespace maxcode::bot::service {

class Installations {
 public:
  explicit Installations(StoreAccess access) : access_(access) {}

  // `repos` null: the list kept as it is.
  void set(const std::string& id, const std::string& account, const std::string& state, const nlohmann::json& repos);
  void add_repos(const std::string& id, const nlohmann::json& added, const nlohmann::json& removed);
  std::optional<std::string> state(const std::string& id);
  // The repositories (OWNER/NAME) of an active installation.
  std::vector<std::string> repos(const std::string& id);
  // The active installation that has `repo`, if one does.
  std::optional<std::string> for_repo(const std::string& repo);

 private:
  StoreAccess access_;
};

}  // namespace maxcode::bot::service
