// The route of a GitHub API request, as GitHub's OpenAPI description names it
// ("/repos/{owner}/{repo}/commits/{ref}/check-runs"): for metric labels, which must keep
// the literal segments that tell routes apart and must not grow with every repository,
// number, sha, label or branch.
#pragma once

#include <string>
#include <vector>

namespace maxcode::bot {

// The routes maxcode calls, in the description's spelling (tests check each one is there).
const std::vector<std::string>& api_route_templates();

// The template that `path` (query string allowed) matches, segment by segment; "other"
// for a path maxcode does not call, so that a label stays bounded whatever is asked.
std::string api_route(const std::string& path);

}  // namespace maxcode::bot
