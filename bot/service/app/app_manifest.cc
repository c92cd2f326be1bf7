#include "bot/service/app/app_manifest.h"

namespace maxcode::bot::service {

nlohmann::json app_manifest(const std::string& name, const std::string& url) {
  std::string base = url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return {{"name", name},
          {"url", base},
          {"description", "Finds faster versions of hot C++ and CUDA functions, proves them, and opens pull requests."},
          {"hook_attributes", {{"url", base + "/webhooks/github"}, {"active", true}}},
          // GitHub sends the browser here with the one-time code that converts into the
          // App's id, key and webhook secret; `/` is the admin-only dashboard.
          {"redirect_url", base + kAppSetupCallbackPath},
          {"public", false},
          // contents write: push the maxcode/* branches; pull requests and issues write:
          // open PRs, answer commands, report regressions; checks write: one check run
          // per job; metadata read: required of every App.
          {"default_permissions",
           {{"contents", "write"}, {"pull_requests", "write"}, {"issues", "write"}, {"checks", "write"}, {"metadata", "read"}}},
          // installation and installation_repositories arrive without subscribing.
          {"default_events", {"push", "issue_comment", "pull_request", "check_run", "check_suite"}}};
}

}  // namespace maxcode::bot::service
