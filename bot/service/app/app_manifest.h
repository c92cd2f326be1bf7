// The GitHub App manifest for GitHub's manifest flow (`maxcode app-manifest`): the
// permissions the service needs and no more, and the events it handles.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace maxcode::bot::service {

// Where `maxcode app-setup` (app_setup.h) serves the manifest flow: the page that sends
// the manifest to GitHub, and the route GitHub redirects the browser to with the code.
inline constexpr const char* kAppSetupPath = "/app-setup";
inline constexpr const char* kAppSetupCallbackPath = "/app-setup/callback";

// `url`: the service's public base URL (webhooks go to URL/webhooks/github; GitHub's
// redirect after creating the App to URL/app-setup/callback).
nlohmann::json app_manifest(const std::string& name, const std::string& url);

}  // namespace maxcode::bot::service
