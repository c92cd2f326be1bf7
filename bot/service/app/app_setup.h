// GitHub's App manifest flow, end to end (`maxcode app-setup`; docs/service.md
// "Creating the App"):
//
//   1. the operator opens PUBLIC_URL/app-setup?state=STATE, the address app-setup
//      printed: a page whose form posts the manifest (app_manifest.h) to GitHub's
//      "new App" page, with that random `state`;
//   2. on GitHub they name the App and create it; GitHub sends the browser to the
//      manifest's redirect_url, PUBLIC_URL/app-setup/callback?code=CODE&state=STATE;
//   3. the callback checks `state`, so that a code from anyone else's App (a page that
//      made the operator's browser open the callback, or someone who found the setup
//      running) is never stored as ours, then converts the code at
//      POST /app-manifests/{code}/conversions (no authentication; GitHub takes a code
//      once, within an hour of the App's creation) into the App's id, private key and
//      webhook secret;
//   4. those are written into the output folder as the files `maxcode serve` reads
//      (AppSetupFiles), what was stored is printed (paths, App id and slug; never a
//      secret), and app-setup ends.
//
// Without the page (the manifest posted by hand, the code read from the redirect's
// address), convert_and_store() does steps 3 and 4 for a code alone (`--code`).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "runner/util/error.h"

namespace maxcode::bot::service {

// What went wrong, said so that the operator knows what to do next; retryable() when
// the code may still convert (GitHub did not answer, or answered 5xx).
class AppSetupError : public Error {
 public:
  using Error::Error;
};

// The files app-setup writes, each mode 0600, never over an existing one:
//   service.json        public_url, webhook_secret_env and github.{api_url, app_id,
//                       app_key_file}: `maxcode serve --config service.json` as it is,
//                       or the values to copy into an existing config
//   app-key.pem         the App's private key (github.app_key_file)
//   webhook-secret.env  MAXCODE_WEBHOOK_SECRET=... (the variable serve's
//                       webhook_secret_env names): a systemd EnvironmentFile=, or
//                       `set -a; . webhook-secret.env; set +a` in a shell
// The folder is made 0700 when app-setup creates it; an existing one keeps its mode.
struct AppSetupFiles {
  explicit AppSetupFiles(const std::filesystem::path& dir);
  std::filesystem::path dir, service_json, app_key, webhook_secret_env;
  std::vector<std::filesystem::path> all() const;
};

// What the conversion returned that is kept (client_id and client_secret are for
// OAuth sign-in, which the service does not do: not stored).
struct CreatedApp {
  std::string id;  // decimal
  std::string slug, name, owner, html_url;
  std::string pem;                            // the private key
  std::optional<std::string> webhook_secret;  // null when the manifest had no webhook
};

struct AppSetupOptions {
  std::string public_url;  // the service's URL; the manifest's webhook and redirect
  std::filesystem::path out_dir;
  std::string name = "maxcode";  // proposed; the operator may change it on GitHub
  std::string github_url = "https://github.com";  // GitHub Enterprise: https://HOST
  std::string api_url = "https://api.github.com";  // GitHub Enterprise: https://HOST/api/v3
  std::string org;  // create the App under this organization; empty = the operator's account
  std::string host = "127.0.0.1";
  int port = 8080;  // 0 picks one
};

// Throws AppSetupError naming the first of `files` that exists, so that a code is not
// spent on a folder that cannot take its credentials.
void refuse_existing_files(const AppSetupFiles& files);

// Step 3 alone: POST {api_url}/app-manifests/{code}/conversions. Throws AppSetupError
// naming what was wrong: a code GitHub does not know (404: used already, older than an
// hour, or never issued), one it refused (422), no answer from api_url.
CreatedApp convert_manifest_code(const std::string& api_url, const std::string& code);

// Step 4 alone: writes the files (0600, O_EXCL: an existing file is an error naming it).
void store_created_app(const AppSetupFiles& files, const CreatedApp& app, const AppSetupOptions& options);

// What was stored and what to do next, for the operator's terminal: paths, App id,
// slug and owner, the install link. No secret.
std::string stored_summary(const AppSetupFiles& files, const CreatedApp& app);

// Steps 3 and 4 for a code (`maxcode app-setup --code`): refuses existing files,
// converts, stores, prints stored_summary() to `out`.
CreatedApp convert_and_store(const AppSetupOptions& options, const std::string& code, std::ostream& out);

// Steps 1 to 4: serves the page and the callback on options.host:port until a callback
// with the right state has converted a code.
class AppSetupServer {
 public:
  // Refuses existing files (refuse_existing_files) and draws the state.
  AppSetupServer(AppSetupOptions options, std::ostream& out);
  ~AppSetupServer();
  AppSetupServer(const AppSetupServer&) = delete;
  AppSetupServer& operator=(const AppSetupServer&) = delete;

  // Binds the listening socket and prints the address to open; returns the port.
  int bind();
  // Serves until a callback with the right state was handled: returns the App stored,
  // or throws the AppSetupError the conversion or the storing gave (the browser is
  // shown the same). Requests with a wrong or missing state are answered 403 and the
  // wait goes on.
  CreatedApp serve();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace maxcode::bot::service
