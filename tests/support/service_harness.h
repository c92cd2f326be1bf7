// The service as tests run it: real `maxcode serve` and `maxcode runner` processes in
// the background (their output in log files), webhooks signed and posted to it, its
// JSON API and metrics read back, and an RSA key for a GitHub App on the local GitHub.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace maxcode::testing {

// A child process in its own process group, output to `log`.
class BackgroundProcess {
 public:
  BackgroundProcess(const std::string& shell, const std::filesystem::path& log,
                    const std::map<std::string, std::string>& env = {});
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;
  int pid() const { return pid_; }
  // Sends `signal` to the whole group and waits; returns the exit status (or 128+signal).
  int stop(int signal);
  // Waits up to `timeout_s` for it to exit by itself; -1 when it did not.
  int wait(double timeout_s);
  bool running();
  std::string log() const;

 private:
  int pid_ = -1;
  int status_ = -1;
  std::filesystem::path log_;
};

struct HttpReply {
  int status = 0;
  std::string body;
};

// `maxcode serve` with a config file, on 127.0.0.1 and a port it picks.
class ServiceProcess {
 public:
  // `binary`: the maxcode executable (tests pass MAXCODE_BINARY).
  ServiceProcess(std::string binary, const std::filesystem::path& dir, const nlohmann::json& config,
                 const std::string& webhook_secret, const std::string& admin_token, const std::string& runner_token);
  // Starts (again, after a kill) the process and waits until it listens.
  void start();
  int kill9();
  int term();
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  BackgroundProcess* process() { return process_.get(); }

  // Posts `body` as a webhook of `event` with delivery id `delivery`, signed with the
  // secret unless `signature` is given ("" = unsigned).
  HttpReply webhook(const std::string& event, const std::string& delivery, const std::string& body,
                    const std::string* signature = nullptr);
  HttpReply get(const std::string& path, const std::string& token = "");
  nlohmann::json jobs();                 // GET /api/jobs
  double metric(const std::string& series);  // the value of one line of /metrics (0 when absent)
  // Waits until `ready(jobs())` or the timeout; returns the last jobs().
  nlohmann::json wait_jobs(const std::function<bool(const nlohmann::json&)>& ready, double timeout_s);

 private:
  std::string binary_;
  std::filesystem::path dir_;
  std::string secret_, admin_, runner_;
  int port_ = 0;
  int starts_ = 0;
  std::unique_ptr<BackgroundProcess> process_;
};

// A 2048-bit RSA key: the private half in GitHub's PEM form, and the public half.
std::pair<std::string, std::string> make_app_key();

// Every example payload of @octokit/webhooks-examples for `event` (tests/github).
nlohmann::json webhook_examples(const std::string& event);

// An "issue_comment created" webhook: `user` wrote `body` on issue `issue` of acme/histo,
// through installation 77 (the example payload with these fields set).
nlohmann::json comment_created(const std::string& user, const std::string& body, int issue, long long comment_id);

// The "installation created" example for installation `id` of account `owner`, with the
// repositories `names` (ids 1, 2, ...): how a test's App gets its repositories.
nlohmann::json installation_created(long long id, const std::string& owner, const std::vector<std::string>& names);

}  // namespace maxcode::testing
