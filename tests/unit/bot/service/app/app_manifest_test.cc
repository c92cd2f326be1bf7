#include "bot/service/app/app_manifest.h"

#include <gtest/gtest.h>

namespace maxcode::bot::service {
namespace {

TEST(AppManifest, AsksForWhatTheServiceUsesAndNoMore) {
  const auto m = app_manifest("maxcode", "https://maxcode.example.com/");
  EXPECT_EQ(m["hook_attributes"]["url"], "https://maxcode.example.com/webhooks/github");
  // GitHub's redirect with the code goes to app-setup's callback, not the admin-only `/`.
  EXPECT_EQ(m["redirect_url"], "https://maxcode.example.com/app-setup/callback");
  const nlohmann::json permissions{{"contents", "write"}, {"pull_requests", "write"}, {"issues", "write"},
                                   {"checks", "write"}, {"metadata", "read"}};
  EXPECT_EQ(m["default_permissions"], permissions);
  EXPECT_EQ(m["default_events"], nlohmann::json({"push", "issue_comment", "pull_request", "check_run", "check_suite"}));
  EXPECT_FALSE(m["public"].get<bool>());
}

}  // namespace
}  // namespace maxcode::bot::service
