// maxcode's PR branches a person closed unmerged (pull_request_event.cc): the target is
// not proposed again until its code changes (delivery checks the function's hash,
// bot/delivery/deliver.h); the store keeps them so the dashboard shows them.
#pragma once

#include <string>

#include "bot/service/queue/store_access.h"

namespace maxcode::bot::service {

class IgnoredTargets {
 public:
  explicit IgnoredTargets(StoreAccess access) : access_(access) {}

  void add(const std::string& repo, const std::string& branch, const std::string& head_sha);
  bool contains(const std::string& repo, const std::string& branch);

 private:
  StoreAccess access_;
};

}  // namespace maxcode::bot::service
