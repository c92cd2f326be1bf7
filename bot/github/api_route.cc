#include "bot/github/api_route.h"

#include <sstream>

namespace maxcode::bot {

namespace {

std::vector<std::string> segments(const std::string& path) {
  std::vector<std::string> out;
  std::stringstream in(path.substr(0, path.find('?')));
  for (std::string s; std::getline(in, s, '/');)
    if (!s.empty()) out.push_back(s);
  return out;
}

bool matches(const std::vector<std::string>& pattern, const std::vector<std::string>& path) {
  if (pattern.size() != path.size()) return false;
  for (std::size_t i = 0; i < path.size(); ++i)
    if (pattern[i].front() != '{' && pattern[i] != path[i]) return false;
  return true;
}

}  // namespace

const std::vector<std::string>& api_route_templates() {
  static const std::vector<std::string> routes{
      "/app",
      "/app/installations/{installation_id}/access_tokens",
      "/app-manifests/{code}/conversions",
      "/user",
      "/users/{username}",
      "/repos/{owner}/{repo}",
      "/repos/{owner}/{repo}/branches/{branch}",
      "/repos/{owner}/{repo}/pulls",
      "/repos/{owner}/{repo}/pulls/{pull_number}",
      "/repos/{owner}/{repo}/labels",
      "/repos/{owner}/{repo}/labels/{name}",
      "/repos/{owner}/{repo}/issues",
      "/repos/{owner}/{repo}/issues/comments/{comment_id}",
      "/repos/{owner}/{repo}/issues/{issue_number}",
      "/repos/{owner}/{repo}/issues/{issue_number}/labels",
      "/repos/{owner}/{repo}/issues/{issue_number}/comments",
      "/repos/{owner}/{repo}/commits/{ref}/check-runs",
      "/repos/{owner}/{repo}/check-runs",
      "/repos/{owner}/{repo}/check-runs/{check_run_id}",
      "/repos/{owner}/{repo}/collaborators/{username}/permission",
  };
  return routes;
}

std::string api_route(const std::string& path) {
  const std::vector<std::string> parts = segments(path);
  if (parts.empty()) return "/";
  // Literal segments first: "issues/comments/{comment_id}" before "issues/{issue_number}/...".
  for (const std::string& route : api_route_templates())
    if (matches(segments(route), parts)) return route;
  return "other";
}

}  // namespace maxcode::bot
