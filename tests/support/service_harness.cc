#include "support/service_harness.h"

#include <httplib.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fcntl.h>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "bot/service/intake/webhook_signature.h"
#include "runner/util/files.h"
#include "runner/util/process.h"
#include "support/test_support.h"

namespace maxcode::testing {

namespace fs = std::filesystem;
using nlohmann::json;

BackgroundProcess::BackgroundProcess(const std::string& shell, const fs::path& log,
                                     const std::map<std::string, std::string>& env)
    : log_(log) {
  pid_ = fork();
  if (pid_ == 0) {
    setpgid(0, 0);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    dup2(fd, 1);
    dup2(fd, 2);
    const int null = open("/dev/null", O_RDONLY);
    dup2(null, 0);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    execl("/bin/sh", "sh", "-c", ("exec " + shell).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  if (pid_ < 0) throw std::runtime_error("fork failed");
  setpgid(pid_, pid_);
}

BackgroundProcess::~BackgroundProcess() {
  if (running()) stop(SIGKILL);
}

bool BackgroundProcess::running() {
  if (status_ >= 0) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return false;
  }
  return true;
}

int BackgroundProcess::stop(int signal) {
  if (!running()) return status_;
  kill(-pid_, signal);
  int status = 0;
  waitpid(pid_, &status, 0);
  status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (signal == SIGKILL) kill(-pid_, SIGKILL);  // what the group started, too
  return status_;
}

int BackgroundProcess::wait(double timeout_s) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < end) {
    if (!running()) return status_;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return -1;
}

std::string BackgroundProcess::log() const { return fs::exists(log_) ? read_text(log_) : ""; }

ServiceProcess::ServiceProcess(std::string binary, const fs::path& dir, const json& config,
                               const std::string& webhook_secret, const std::string& admin_token,
                               const std::string& runner_token)
    : binary_(std::move(binary)),
      dir_(dir), secret_(webhook_secret), admin_(admin_token), runner_(runner_token) {
  json c = config;
  if (!c.contains("listen")) c["listen"] = "127.0.0.1:0";
  if (!c.contains("db")) c["db"] = (dir / "service.sqlite").string();
  write_text(dir / "service.json", c.dump(2));
}

void ServiceProcess::start() {
  const fs::path log = dir_ / ("serve-" + std::to_string(++starts_) + ".log");
  // The port stays the same across restarts once known.
  std::string listen = port_ ? " --listen 127.0.0.1:" + std::to_string(port_) : "";
  process_ = std::make_unique<BackgroundProcess>(
      binary_ + " serve --config " + (dir_ / "service.json").string() + listen, log,
      std::map<std::string, std::string>{{"MAXCODE_WEBHOOK_SECRET", secret_}, {"MAXCODE_ADMIN_TOKEN", admin_},
                                         {"MAXCODE_RUNNER_TOKEN", runner_}});
  static const std::regex listening(R"(listening on http://127\.0\.0\.1:(\d+))");
  for (int i = 0; i < 600; ++i) {
    std::smatch m;
    const std::string text = process_->log();
    if (std::regex_search(text, m, listening)) {
      port_ = std::stoi(m[1]);
      // Listening is logged just before accept starts; wait for an answer.
      for (int j = 0; j < 100 && get("/healthz").status != 200; ++j) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      return;
    }
    if (!process_->running()) throw std::runtime_error("maxcode serve exited:\n" + text);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  throw std::runtime_error("maxcode serve did not start:\n" + process_->log());
}

int ServiceProcess::kill9() { return process_->stop(SIGKILL); }
int ServiceProcess::term() { return process_->stop(SIGTERM); }

HttpReply ServiceProcess::webhook(const std::string& event, const std::string& delivery, const std::string& body,
                                  const std::string* signature) {
  httplib::Client client("127.0.0.1", port_);
  client.set_read_timeout(10, 0);
  httplib::Headers headers{{"X-GitHub-Event", event}, {"X-GitHub-Delivery", delivery}, {"User-Agent", "GitHub-Hookshot/test"}};
  const std::string sig = signature ? *signature : bot::service::sign_webhook(secret_, body);
  if (!sig.empty()) headers.emplace("X-Hub-Signature-256", sig);
  auto r = client.Post("/webhooks/github", headers, body, "application/json");
  if (!r) return {0, httplib::to_string(r.error())};
  return {r->status, r->body};
}

HttpReply ServiceProcess::get(const std::string& path, const std::string& token) {
  httplib::Client client("127.0.0.1", port_);
  client.set_read_timeout(10, 0);
  httplib::Headers headers;
  if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
  auto r = client.Get(path.c_str(), headers);
  if (!r) return {0, httplib::to_string(r.error())};
  return {r->status, r->body};
}

json ServiceProcess::jobs() {
  const HttpReply r = get("/api/jobs", admin_);
  if (r.status != 200) throw std::runtime_error("GET /api/jobs: " + std::to_string(r.status) + " " + r.body);
  return json::parse(r.body);
}

double ServiceProcess::metric(const std::string& series) {
  const std::string text = get("/metrics").body;
  const std::string prefix = series + " ";
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) return std::stod(line.substr(prefix.size()));
  return 0;
}

json ServiceProcess::wait_jobs(const std::function<bool(const json&)>& ready, double timeout_s) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  json last;
  while (std::chrono::steady_clock::now() < end) {
    last = jobs();
    if (ready(last)) return last;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return last;
}

std::pair<std::string, std::string> make_app_key() {
  auto text = [](BIO* bio) {
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio, &data);
    return std::string(data, static_cast<std::size_t>(n));
  };
  EVP_PKEY* key = EVP_RSA_gen(2048);
  BIO* priv = BIO_new(BIO_s_mem());
  BIO* pub = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey_traditional(priv, key, nullptr, nullptr, 0, nullptr, nullptr);
  PEM_write_bio_PUBKEY(pub, key);
  std::pair<std::string, std::string> pair{text(priv), text(pub)};
  BIO_free(priv);
  BIO_free(pub);
  EVP_PKEY_free(key);
  return pair;
}

json webhook_examples(const std::string& event) {
  Command c;
  c.shell = "node -e " +
            shell_quote("const x = require('@octokit/webhooks-examples'); const e = x.find((e) => e.name === process.argv[1]);"
                        " process.stdout.write(JSON.stringify(e ? e.examples : []))") +
            " " + shell_quote(event);
  c.cwd = source_path("tests/github").string();
  const Outcome o = run(c);
  if (!o.ok()) throw std::runtime_error("reading @octokit/webhooks-examples: " + o.tail());
  return json::parse(o.out);
}

json installation_created(long long id, const std::string& owner, const std::vector<std::string>& names) {
  json installation = webhook_examples("installation")[1];  // "created"
  installation["installation"]["id"] = id;
  installation["installation"]["account"]["login"] = owner;
  installation["repositories"] = json::array();
  for (std::size_t i = 0; i < names.size(); ++i)
    installation["repositories"].push_back(
        {{"id", i + 1}, {"name", names[i]}, {"full_name", owner + "/" + names[i]}, {"private", false}});
  return installation;
}

json comment_created(const std::string& user, const std::string& body, int issue, long long comment_id) {
  json p = webhook_examples("issue_comment")[0];
  p["action"] = "created";
  p["issue"]["number"] = issue;
  p["issue"].erase("pull_request");
  p["comment"]["id"] = comment_id;
  p["comment"]["body"] = body;
  p["comment"]["user"]["login"] = user;
  p["comment"]["user"]["type"] = "User";
  p["repository"]["full_name"] = "acme/histo";
  p["repository"]["name"] = "histo";
  p["repository"]["owner"]["login"] = "acme";
  p["installation"] = {{"id", 77}, {"node_id", "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNzc="}};
  p["sender"]["login"] = user;
  return p;
}

}  // namespace maxcode::testing
