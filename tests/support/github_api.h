// The local GitHub API of tests/github/server.mjs, started once per test program:
// every request is checked against GitHub's OpenAPI description there. Tests set up
// repositories and tokens, inject failures and read the state through its control
// endpoints. Each test's requests must all have been valid (check_clean()); at exit the
// program prints how many requests were validated.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace maxcode::testing {

class FakeGithub {
 public:
  // The shared server, started on first use. Returns null when node is not installed
  // (`why` says so; tests skip); throws when node is there but the server fails.
  static FakeGithub* get(std::string* why);

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

  // Forgets all state (repos, tokens, PRs, failures), keeping the request counts.
  void reset();
  void setup(const nlohmann::json& config);
  // {kind: 401|403|secondary|primary|422|500|after, times, method, path (regex)}.
  void fail(const nlohmann::json& failure);
  void replay(const std::string& scenario);
  void merge(const std::string& owner, const std::string& name, int number);
  nlohmann::json state();
  nlohmann::json stats();  // since the last reset
  // Adds this test's invalid requests and off-schema responses to the failures.
  void check_clean();

  int validated_total() const { return validated_total_; }
  int invalid_total() const { return invalid_total_ + response_invalid_total_; }

  ~FakeGithub();

 private:
  FakeGithub() = default;
  nlohmann::json control(const std::string& method, const std::string& path, const nlohmann::json& body = nullptr);
  void account();  // adds the current stats to the totals
  int pid_ = -1;
  int stdin_fd_ = -1;
  int port_ = 0;
  int validated_total_ = 0, invalid_total_ = 0, response_invalid_total_ = 0;
};

}  // namespace maxcode::testing
