#include "support/github_api.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include <gtest/gtest.h>
#include <httplib.h>

#include "support/test_support.h"

namespace maxcode::testing {

namespace fs = std::filesystem;

namespace {

std::string find_node() {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const fs::path candidate = fs::path(dirs.substr(start, end - start)) / "node";
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
    start = end + 1;
  }
  return "";
}

std::unique_ptr<FakeGithub>& instance() {
  static std::unique_ptr<FakeGithub> server;
  return server;
}

// Prints the totals when the test program ends.
class Report : public ::testing::Environment {
 public:
  void TearDown() override {
    if (auto& s = instance()) {
      s->reset();
      std::printf("fake GitHub: %d requests validated against GitHub's OpenAPI description, %d invalid\n",
                  s->validated_total(), s->invalid_total());
    }
  }
};

}  // namespace

FakeGithub* FakeGithub::get(std::string* why) {
  auto& server = instance();
  if (server) return server.get();
  const std::string node = find_node();
  if (node.empty()) {
    *why = "node is not installed: the GitHub API tests need it (scripts/setup.sh installs nodejs)";
    return nullptr;
  }
  const fs::path script = source_path("tests/github/server.mjs");
  if (!fs::exists(source_path("tests/github/node_modules/@octokit/openapi")))
    throw std::runtime_error("tests/github/node_modules is missing: run npm ci --prefix tests/github (scripts/setup.sh does)");
  int in_pipe[2], out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  std::unique_ptr<FakeGithub> created(new FakeGithub());
  const std::string script_text = script.string();
  const char* argv[] = {node.c_str(), script_text.c_str(), "--port", "0", nullptr};
  created->pid_ = fork();
  if (created->pid_ == 0) {
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    execv(argv[0], const_cast<char**>(argv));
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  created->stdin_fd_ = in_pipe[1];  // the server exits when this closes (we died)
  std::string line;
  char c;
  while (read(out_pipe[0], &c, 1) == 1 && c != '\n') line += c;
  close(out_pipe[0]);
  const auto first = nlohmann::json::parse(line, nullptr, false);
  if (!first.is_object() || !first.contains("port"))
    throw std::runtime_error("tests/github/server.mjs did not start (first line: '" + line + "')");
  created->port_ = first["port"].get<int>();
  server = std::move(created);
  ::testing::AddGlobalTestEnvironment(new Report);
  return server.get();
}

FakeGithub::~FakeGithub() {
  if (stdin_fd_ >= 0) close(stdin_fd_);
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
}

nlohmann::json FakeGithub::control(const std::string& method, const std::string& path, const nlohmann::json& body) {
  httplib::Client client("127.0.0.1", port_);
  client.set_read_timeout(30, 0);
  httplib::Result r = method == "GET" ? client.Get(path.c_str())
                                      : client.Post(path.c_str(), body.is_null() ? "{}" : body.dump(), "application/json");
  if (!r || r->status != 200)
    throw std::runtime_error("fake GitHub control " + path + " failed: " + (r ? r->body : httplib::to_string(r.error())));
  return nlohmann::json::parse(r->body);
}

void FakeGithub::account() {
  const nlohmann::json s = stats();
  validated_total_ += s.value("validated", 0);
  invalid_total_ += s.value("invalid", 0);
  response_invalid_total_ += s.value("response_invalid", 0);
}

void FakeGithub::reset() {
  account();
  control("POST", "/_control/reset");
}

void FakeGithub::setup(const nlohmann::json& config) { control("POST", "/_control/setup", config); }
void FakeGithub::fail(const nlohmann::json& failure) { control("POST", "/_control/fail", failure); }
void FakeGithub::replay(const std::string& scenario) { control("POST", "/_control/replay", {{"scenario", scenario}}); }
void FakeGithub::merge(const std::string& owner, const std::string& name, int number) {
  control("POST", "/_control/merge", {{"owner", owner}, {"name", name}, {"number", number}});
}
nlohmann::json FakeGithub::state() { return control("GET", "/_control/state"); }
nlohmann::json FakeGithub::stats() { return control("GET", "/_control/stats"); }

void FakeGithub::check_clean() {
  const nlohmann::json s = stats();
  EXPECT_EQ(s.value("invalid", 0), 0) << "requests that do not match GitHub's OpenAPI description:\n" << s["problems"].dump(2);
  EXPECT_EQ(s.value("response_invalid", 0), 0) << "fake responses off GitHub's schema:\n" << s["problems"].dump(2);
}

}  // namespace maxcode::testing
