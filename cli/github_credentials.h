// GitHub credentials from the process environment, read here at the CLI (docs/architecture.md
// "The environment: read at the CLI") and handed to the delivery as a TokenSource.
#pragma once

#include <memory>
#include <string>

#include "bot/github/github_client.h"
#include "bot/github/token_source.h"

namespace maxcode {

// A GitHub App (MAXCODE_APP_ID, MAXCODE_APP_KEY_FILE, a PEM file, and
// MAXCODE_INSTALLATION_ID; the token scoped to `repo`, OWNER/NAME), else GITHUB_TOKEN or
// GH_TOKEN. Throws std::runtime_error when there are none, or when MAXCODE_APP_ID is set
// but the others are missing or the key file cannot be read.
std::shared_ptr<bot::TokenSource> github_tokens_from_env(const bot::ClientOptions& client, const std::string& repo);

}  // namespace maxcode
