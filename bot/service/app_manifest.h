// The GitHub App manifest for GitHub's manifest flow (`maxcode app-manifest`): the
// permissions the service needs and no more, and the events it handles.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace maxcode::bot::service {

// `url`: the service's public base URL (webhooks go to URL/webhooks/github).
nlohmann::json app_manifest(const std::string& name, const std::string& url);

}  // namespace maxcode::bot::service
