// A real git server on loopback for tests: `git http-backend` (git's own smart-HTTP
// CGI program) behind a small cpp-httplib server with HTTP basic authentication, the
// way GitHub takes tokens (user `x-access-token`, the token as password). Request
// bodies stream into the CGI program and its output streams back; the CGI `Status:`
// header becomes the HTTP status. Repositories are bare directories under root().
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

namespace httplib {
class Server;
}

namespace maxcode::testing {

class GitServer {
 public:
  // `token` is the password the server takes; "*" takes any non-empty one (for App
  // installation tokens, which the test does not know in advance).
  explicit GitServer(std::string token);
  ~GitServer();
  GitServer(const GitServer&) = delete;
  GitServer& operator=(const GitServer&) = delete;

  const std::filesystem::path& root() const { return root_; }
  int port() const { return port_; }
  // http://127.0.0.1:PORT/<relative>, e.g. url("acme/histo.git").
  std::string url(const std::string& relative) const;

  // Creates the bare repository root()/<relative> and pushes the files of `source`
  // to it as one commit on `branch` (made with the git command line). Returns its sha.
  std::string create_repo(const std::string& relative, const std::filesystem::path& source,
                          const std::string& branch = "main");
  // Refuses pushes to refs/heads/<branch> with GitHub's protected-branch message.
  void protect(const std::string& relative, const std::string& branch);

  int requests() const { return requests_; }
  int refused() const { return refused_; }  // 401s: no or wrong credentials

 private:
  std::filesystem::path root_;
  std::string token_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> requests_{0}, refused_{0};
};

// Runs `git <args>` (a shell-quoted string) in `cwd`; returns stdout, throws with
// stderr when git fails.
std::string git(const std::string& args, const std::filesystem::path& cwd = {});

}  // namespace maxcode::testing
