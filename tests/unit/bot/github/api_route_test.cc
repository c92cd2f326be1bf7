// Metric routes: every template is one of GitHub's own paths (its OpenAPI description,
// from npm's @octokit/openapi), every path maxcode calls maps to one, and nothing that
// varies (owner, number, sha, label, branch, login) ever reaches a label.
#include "bot/github/api_route.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "runner/util/files.h"
#include "support/test_support.h"

namespace maxcode::bot {
namespace {

TEST(ApiRoute, EveryTemplateIsAPathOfGithubsDescription) {
  const auto spec_file =
      testing::source_path("tests/github/node_modules/@octokit/openapi/generated/api.github.com.json");
  if (!std::filesystem::exists(spec_file)) GTEST_SKIP() << "run npm ci --prefix tests/github (scripts/setup.sh does)";
  const nlohmann::json spec = nlohmann::json::parse(read_text(spec_file));
  for (const std::string& route : api_route_templates())
    EXPECT_TRUE(spec["paths"].contains(route)) << route << " is not a path of GitHub's REST API";
}

TEST(ApiRoute, PathsMapToTheirTemplateAndKeepTheLiteralSegments) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"/repos/acme/histo/issues/3/comments", "/repos/{owner}/{repo}/issues/{issue_number}/comments"},
      {"/repos/acme/histo/issues/comments/99", "/repos/{owner}/{repo}/issues/comments/{comment_id}"},
      {"/repos/acme/histo/commits/" + std::string(40, 'a') + "/check-runs?check_name=maxcode%3A%20optimize",
       "/repos/{owner}/{repo}/commits/{ref}/check-runs"},
      {"/repos/acme/histo/labels/performance", "/repos/{owner}/{repo}/labels/{name}"},
      {"/repos/acme/histo/branches/maxcode%2Fsrc-h-cpp%2Fhistogram", "/repos/{owner}/{repo}/branches/{branch}"},
      {"/repos/acme/histo/pulls?state=all&head=acme%3Amaxcode%2Fx", "/repos/{owner}/{repo}/pulls"},
      {"/repos/acme/histo/pulls/12", "/repos/{owner}/{repo}/pulls/{pull_number}"},
      {"/repos/acme/histo/collaborators/alice/permission", "/repos/{owner}/{repo}/collaborators/{username}/permission"},
      {"/users/perf-helper%5Bbot%5D", "/users/{username}"},
      {"/app/installations/77/access_tokens", "/app/installations/{installation_id}/access_tokens"},
      {"/repos/acme/histo", "/repos/{owner}/{repo}"},
      {"/app", "/app"},
      {"/repos/acme/histo/git/refs/heads/main", "other"},  // not called: bounded, not literal
      {"/", "/"},
  };
  for (const auto& [path, route] : cases) EXPECT_EQ(api_route(path), route) << path;
}

}  // namespace
}  // namespace maxcode::bot
