#include "bot/service/app/app_setup.h"

#include <fcntl.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "bot/github/github_client.h"
#include "bot/service/app/app_manifest.h"
#include "bot/service/intake/http_server.h"
#include "bot/service/service_config.h"
#include "bot/service/intake/webhook_signature.h"
#include "runner/util/hex.h"
#include "runner/util/html_escape.h"
#include "runner/util/json_io.h"

namespace fs = std::filesystem;

namespace maxcode::bot::service {
namespace {

std::string without_trailing_slash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

// Characters that stand unquoted alike in a systemd EnvironmentFile= and in a POSIX
// shell's `.` (GitHub's webhook secrets are hex).
bool plain_env_value(const std::string& value) {
  if (value.empty()) return false;
  for (char c : value)
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::strchr("._~+/=:@%-", c) == nullptr) return false;
  return true;
}

// Creates `path` mode 0600 and writes `content` whole. O_EXCL: an existing file (or a
// link planted in its place) is never written through.
void write_private_file(const fs::path& path, const std::string& content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST)
      throw AppSetupError(path.string() + " exists: app-setup never overwrites a file (move it away or choose another --out)");
    throw AppSetupError("cannot create " + path.string() + ": " + std::strerror(errno));
  }
  // The mode given to open() passes through the umask; this one must be 0600 whatever
  // the umask is.
  bool ok = ::fchmod(fd, 0600) == 0;
  for (std::size_t done = 0; ok && done < content.size();) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<std::size_t>(n);
  }
  ok = ok && ::fsync(fd) == 0;
  const int error = errno;
  ok = ::close(fd) == 0 && ok;
  if (!ok) throw AppSetupError("cannot write " + path.string() + ": " + std::strerror(error));
}

// Creates the folder 0700 (its parents as usual); an existing one is left as it is.
void make_private_dir(const fs::path& dir) {
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return;
  if (!dir.parent_path().empty()) fs::create_directories(dir.parent_path(), ec);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw AppSetupError("cannot create the folder " + dir.string() + ": " + std::strerror(errno));
  ::chmod(dir.c_str(), 0700);  // past the umask, as for the files
}

// What the operator is told when the conversion failed, and what to do about it.
std::string conversion_failure(const GithubError& e, const std::string& api_url, const std::string& code) {
  const std::string where = "POST " + without_trailing_slash(api_url) + "/app-manifests/{code}/conversions";
  const std::string api = api_url == AppSetupOptions{}.api_url ? "" : " --api-url " + api_url;
  const std::string app_exists =
      " The App itself was created on GitHub: delete it (its settings, Advanced) and run app-setup again, or"
      " generate a private key and set a webhook secret in its settings and store them by hand.";
  const std::string retry = " The code converts once, within an hour of the App's creation: retry with"
                            " `maxcode app-setup --code " + code + " --out DIR" + api + "`.";
  const std::string said = e.github_message.empty() ? "" : " " + e.github_message;
  if (e.status == 404)
    return where + " answered 404" + said + ": GitHub does not know this code (a code converts once, within an hour of"
           " the App's creation; this one was used already, expired or never issued)." + app_exists;
  if (e.status == 422) return where + " answered 422" + said + ": GitHub refused the code." + app_exists;
  if (e.status == 0) return "no answer from " + where + " (" + e.what() + ")." + retry;
  if (e.retryable()) return where + " answered " + std::to_string(e.status) + said + "." + retry;
  return where + " answered " + std::to_string(e.status) + said + "." + app_exists;
}

std::string page(const std::string& title, const std::string& body) {
  return "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>" + html_escape(title) +
         "</title></head>\n<body style=\"font-family: sans-serif; max-width: 48em; margin: 2em auto\">\n<h1>" +
         html_escape(title) + "</h1>\n" + body + "</body></html>\n";
}

void answer(httplib::Response& res, int status, const std::string& html) {
  res.status = status;
  // The addresses carry the state and the code: no cache keeps them, a Referer names
  // the origin alone, no other site frames the page to have its button clicked.
  // (Not no-referrer: browsers then send the form's POST to GitHub with `Origin: null`.)
  res.set_header("Cache-Control", "no-store");
  res.set_header("Referrer-Policy", "strict-origin");
  res.set_header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'");
  res.set_content(html, "text/html; charset=utf-8");
}

}  // namespace

AppSetupFiles::AppSetupFiles(const fs::path& d)
    : dir(d), service_json(d / "service.json"), app_key(d / "app-key.pem"), webhook_secret_env(d / "webhook-secret.env") {}

std::vector<fs::path> AppSetupFiles::all() const { return {service_json, app_key, webhook_secret_env}; }

void refuse_existing_files(const AppSetupFiles& files) {
  std::error_code ec;
  if (fs::exists(files.dir, ec) && !fs::is_directory(files.dir, ec))
    throw AppSetupError("--out " + files.dir.string() + " is not a folder");
  for (const fs::path& f : files.all()) {
    std::error_code ec;
    if (fs::symlink_status(f, ec).type() != fs::file_type::not_found)
      throw AppSetupError(f.string() + " exists: app-setup never overwrites a file (move it away or choose another --out)");
  }
}

CreatedApp convert_manifest_code(const std::string& api_url, const std::string& code) {
  if (code.empty()) throw AppSetupError("the manifest code is empty");
  const std::string where = "POST " + without_trailing_slash(api_url) + "/app-manifests/{code}/conversions";
  ClientOptions options;
  options.api_url = api_url;
  options.max_attempts = 3;  // a POST is not repeated after an error; only rate limits are waited out
  options.max_wait_s = 60;
  nlohmann::json body;
  try {
    GithubClient client(options, nullptr);  // the code is the credential: no token
    const HttpResult r = client.request("POST", "/app-manifests/" + url_encode(code) + "/conversions", std::nullopt);
    body = nlohmann::json::parse(r.body, nullptr, false);
  } catch (const GithubError& e) {
    throw AppSetupError(conversion_failure(e, api_url, code), e.retryable() ? Retryable::kYes : Retryable::kNo);
  } catch (const std::invalid_argument& e) {
    throw AppSetupError("the API URL " + api_url + ": " + e.what());
  }
  // The code is spent now: keep whatever the answer holds that matters, and fail only
  // without the id or the key, which nothing else can give back.
  if (!body.is_object() || !body.contains("id") || !body["id"].is_number_integer())
    throw AppSetupError(where + ": the answer holds no App id");
  if (!body.contains("pem") || !body["pem"].is_string() || body["pem"].get<std::string>().find("PRIVATE KEY") == std::string::npos)
    throw AppSetupError(where + ": the answer holds no private key (pem)");
  auto text = [&](const nlohmann::json& object, const char* key) {
    return object.is_object() && object.contains(key) && object[key].is_string() ? object[key].get<std::string>() : "";
  };
  CreatedApp app;
  app.id = std::to_string(body["id"].get<long long>());
  app.pem = body["pem"].get<std::string>();
  app.slug = text(body, "slug");
  app.name = text(body, "name");
  app.html_url = text(body, "html_url");
  if (body.contains("owner")) app.owner = text(body["owner"], "login");
  if (body.contains("webhook_secret") && body["webhook_secret"].is_string()) app.webhook_secret = body["webhook_secret"].get<std::string>();
  return app;
}

void store_created_app(const AppSetupFiles& files, const CreatedApp& app, const AppSetupOptions& options) {
  make_private_dir(files.dir);
  // The key first: of the three it is the one GitHub never shows again.
  write_private_file(files.app_key, app.pem);
  const ServiceConfig defaults;
  nlohmann::json config = nlohmann::json::object();
  if (!options.public_url.empty()) config["public_url"] = without_trailing_slash(options.public_url);
  config["webhook_secret_env"] = defaults.webhook_secret_env;
  config["github"] = {{"api_url", without_trailing_slash(options.api_url)},
                      {"app_id", std::stoll(app.id)},
                      {"app_key_file", fs::absolute(files.app_key).lexically_normal().string()}};
  write_private_file(files.service_json, dump_json(config, 2) + "\n");
  if (!app.webhook_secret) return;  // no webhook in the manifest: stored_summary() says so
  if (!plain_env_value(*app.webhook_secret))
    throw AppSetupError("GitHub's webhook secret holds characters an environment file cannot take unquoted; " +
                        files.app_key.string() + " and " + files.service_json.string() +
                        " are stored: set a new webhook secret in the App's settings and in " + defaults.webhook_secret_env);
  write_private_file(files.webhook_secret_env, defaults.webhook_secret_env + "=" + *app.webhook_secret + "\n");
}

std::string stored_summary(const AppSetupFiles& files, const CreatedApp& app) {
  const std::string env = ServiceConfig{}.webhook_secret_env;
  std::string s = "Created the GitHub App \"" + app.name + "\" (slug " + app.slug + ", id " + app.id + ")";
  if (!app.owner.empty()) s += ", owned by " + app.owner;
  if (!app.html_url.empty()) s += ": " + app.html_url;
  s += "\nStored in " + files.dir.string() + " (mode 0600, readable by this user only):\n";
  s += "  " + files.service_json.string() + "  github.app_id " + app.id + ", github.app_key_file, github.api_url, public_url\n";
  s += "  " + files.app_key.string() + "  the App's private key\n";
  if (app.webhook_secret)
    s += "  " + files.webhook_secret_env.string() + "  " + env + ", the webhook secret\n";
  else
    s += "  (no webhook secret: GitHub gave none; set one in the App's settings and in " + env + ")\n";
  s += "Next:\n";
  if (!app.html_url.empty()) s += "  install the App on the repositories maxcode may work on: " + app.html_url + "/installations/new\n";
  s += "  start the service: set -a; . " + files.webhook_secret_env.string() + "; set +a; maxcode serve --config " +
       files.service_json.string() + "\n";
  return s;
}

CreatedApp convert_and_store(const AppSetupOptions& options, const std::string& code, std::ostream& out) {
  const AppSetupFiles files(options.out_dir);
  refuse_existing_files(files);
  CreatedApp app = convert_manifest_code(options.api_url, code);
  store_created_app(files, app, options);
  out << stored_summary(files, app) << std::flush;
  return app;
}

struct AppSetupServer::State {
  AppSetupOptions options;
  std::ostream& out;
  std::string state = random_hex(16);
  std::unique_ptr<HttpServer> http;
  int port = -1;
  std::mutex mutex;  // the callback's conversion, `out`, and the fields below
  std::condition_variable finished;
  bool done = false;
  CreatedApp app;
  std::exception_ptr error;

  State(AppSetupOptions o, std::ostream& os) : options(std::move(o)), out(os) {}

  std::string base() const { return without_trailing_slash(options.public_url); }
  bool state_matches(const httplib::Request& req) const {
    return constant_time_equal(req.get_param_value("state"), state);
  }
  std::string new_app_url() const {
    const std::string github = without_trailing_slash(options.github_url);
    const std::string account = options.org.empty() ? "" : "/organizations/" + options.org;
    return github + account + "/settings/apps/new?state=" + state;
  }
  std::string start_page() const {
    const nlohmann::json manifest_json = app_manifest(options.name, options.public_url);
    const std::string manifest = dump_json(manifest_json);
    const std::string account = options.org.empty() ? "your GitHub account" : "the organization " + options.org;
    return page("Create the " + options.name + " GitHub App",
                "<p>This sends the App's manifest (below) to GitHub. There you may rename the App, then create it under " +
                    html_escape(account) +
                    ". GitHub then sends you back here, and <code>maxcode app-setup</code> stores the App's id, private "
                    "key and webhook secret on the server.</p>\n<form action=\"" + html_escape(new_app_url()) +
                    "\" method=\"post\">\n<input type=\"hidden\" name=\"manifest\" value=\"" + html_escape(manifest) +
                    "\">\n<button type=\"submit\">Create the App on GitHub</button>\n</form>\n<pre>" +
                    html_escape(dump_json(manifest_json, 2)) + "</pre>\n");
  }
};

AppSetupServer::AppSetupServer(AppSetupOptions options, std::ostream& out)
    : state_(std::make_unique<State>(std::move(options), out)) {
  State& s = *state_;
  if (s.options.public_url.rfind("https://", 0) != 0 && s.options.public_url.rfind("http://", 0) != 0)
    throw AppSetupError("--url: expected the service's public http(s) URL, got '" + s.options.public_url + "'");
  refuse_existing_files(AppSetupFiles(s.options.out_dir));

  // A few people's browsers, for minutes: a small pool, the service's deadlines.
  HttpLimits limits;
  limits.max_connections = 16;
  s.http = std::make_unique<HttpServer>(limits);
  httplib::Server& http = *s.http;
  http.set_read_timeout(static_cast<time_t>(limits.header_timeout_s), 0);
  http.set_keep_alive_timeout(static_cast<time_t>(limits.keep_alive_s));

  http.Get(kAppSetupPath, [&s](const httplib::Request& req, httplib::Response& res) {
    if (!s.state_matches(req))
      return answer(res, 403, page("Not this address", "<p>Open the address that <code>maxcode app-setup</code> printed: it "
                                                      "carries the setup's state.</p>\n"));
    answer(res, 200, s.start_page());
  });

  http.Get(kAppSetupCallbackPath, [&s](const httplib::Request& req, httplib::Response& res) {
    if (!s.state_matches(req)) {
      {
        std::lock_guard lock(s.mutex);
        s.out << "app-setup: refused a callback from " << req.remote_addr
              << " whose state is not this setup's (nothing converted, still waiting)\n" << std::flush;
      }
      return answer(res, 403, page("Wrong state", "<p>This redirect does not carry the state of the running <code>maxcode "
                                                  "app-setup</code>, so it is not the App that this setup asked GitHub to "
                                                  "create. Nothing was converted or stored.</p>\n"));
    }
    const std::string code = req.get_param_value("code");
    if (code.empty())
      return answer(res, 400, page("No code", "<p>GitHub's redirect carries <code>?code=...</code>; this one has none.</p>\n"));
    std::lock_guard lock(s.mutex);
    if (s.done)
      return answer(res, 409, page("Already done", "<p>This setup has converted a code already and has ended.</p>\n"));
    try {
      s.app = convert_and_store(s.options, code, s.out);
      const std::string install = s.app.html_url.empty() ? "" : s.app.html_url + "/installations/new";
      answer(res, 200, page("The App is created",
                            "<p>The GitHub App <b>" + html_escape(s.app.slug) + "</b> (id " + html_escape(s.app.id) +
                                ") exists, and its id, private key and webhook secret are stored on the server in <code>" +
                                html_escape(s.options.out_dir.string()) + "</code>.</p>\n" +
                                (install.empty() ? "" : "<p>Next: <a href=\"" + html_escape(install) +
                                                            "\">install it</a> on the repositories maxcode may work on.</p>\n")));
    } catch (const AppSetupError& e) {
      s.error = std::current_exception();
      answer(res, e.retryable() ? 502 : 400, page("The App's credentials were not stored", "<p>" + html_escape(e.what()) + "</p>\n"));
    } catch (const std::exception& e) {
      s.error = std::current_exception();
      answer(res, 500, page("The App's credentials were not stored", "<p>" + html_escape(e.what()) + "</p>\n"));
    }
    s.done = true;
    s.finished.notify_all();
  });
}

AppSetupServer::~AppSetupServer() = default;

int AppSetupServer::bind() {
  State& s = *state_;
  const std::string where = s.options.host + ":" + std::to_string(s.options.port);
  s.port = s.options.port == 0 ? s.http->bind_to_any_port(s.options.host)
                               : (s.http->bind_to_port(s.options.host, s.options.port) ? s.options.port : -1);
  if (s.port < 0) throw AppSetupError("--listen: cannot listen on " + where + " (in use, or not an address of this machine)");
  s.http->widen_backlog();
  std::lock_guard lock(s.mutex);
  s.out << "Open this address in a browser signed in to GitHub"
        << (s.options.org.empty() ? "" : " as an owner of " + s.options.org) << ":\n  " << s.base() << kAppSetupPath
        << "?state=" << s.state << "\n"
        << "It is served here on http://" << s.options.host << ":" << s.port << "; GitHub sends the browser back to "
        << s.base() << kAppSetupCallbackPath << ".\nWaiting (Ctrl-C ends the setup; nothing is stored before GitHub's "
        << "redirect)...\n" << std::flush;
  return s.port;
}

CreatedApp AppSetupServer::serve() {
  State& s = *state_;
  if (s.port < 0) bind();
  std::thread server([&s] { s.http->listen_after_bind(); });
  {
    std::unique_lock lock(s.mutex);
    s.finished.wait(lock, [&s] { return s.done; });
  }
  // The browser's answer is written by the handler before the pool is shut down.
  s.http->stop();
  server.join();
  if (s.error) std::rethrow_exception(s.error);
  return s.app;
}

}  // namespace maxcode::bot::service
