#include "support/git_server.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <vector>

#include <httplib.h>

#include "runner/util/files.h"
#include "runner/util/process.h"
#include "support/test_support.h"

extern char** environ;

namespace maxcode::testing {

namespace fs = std::filesystem;

namespace {

// One run of git http-backend: its pipes, and its stdout collected by a thread so that
// neither side can block the other (it may write before it has read all its input).
struct Cgi {
  pid_t pid = -1;
  int in = -1, out = -1;
  std::thread reader;
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<std::string> chunks;
  bool eof = false;

  ~Cgi() {
    if (in >= 0) close(in);
    if (reader.joinable()) reader.join();
    if (out >= 0) close(out);
    if (pid > 0) waitpid(pid, nullptr, 0);
  }

  // Blocks until output or end of output; false at the end.
  bool next(std::string& chunk) {
    std::unique_lock lock(mutex);
    ready.wait(lock, [&] { return !chunks.empty() || eof; });
    if (chunks.empty()) return false;
    chunk = std::move(chunks.front());
    chunks.pop_front();
    return true;
  }
};

// git-http-backend's absolute path, found once: the child then needs only execve,
// which is safe after fork() in a threaded program.
const std::string& backend_path() {
  static const std::string path = [] {
    std::string dir = git("--exec-path");
    while (!dir.empty() && (dir.back() == '\n' || dir.back() == '\r')) dir.pop_back();
    return dir + "/git-http-backend";
  }();
  return path;
}

std::shared_ptr<Cgi> spawn_backend(const std::vector<std::string>& env_extra) {
  int in_pipe[2], out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  env.insert(env.end(), env_extra.begin(), env_extra.end());
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const char* argv[] = {backend_path().c_str(), nullptr};
  auto cgi = std::make_shared<Cgi>();
  cgi->pid = fork();
  if (cgi->pid == 0) {
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    execve(argv[0], const_cast<char**>(argv), envp.data());
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  cgi->in = in_pipe[1];
  cgi->out = out_pipe[0];
  Cgi* raw = cgi.get();
  cgi->reader = std::thread([raw] {
    char buffer[65536];
    for (;;) {
      const ssize_t n = read(raw->out, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      std::lock_guard lock(raw->mutex);
      if (n <= 0) {
        raw->eof = true;
        raw->ready.notify_all();
        return;
      }
      raw->chunks.emplace_back(buffer, static_cast<std::size_t>(n));
      raw->ready.notify_all();
    }
  });
  return cgi;
}

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

std::string decode_basic(const std::string& header) {
  if (header.rfind("Basic ", 0) != 0) return "";
  static const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  for (char c : header.substr(6)) {
    const auto v = alphabet.find(c);
    if (v == std::string::npos) break;
    buffer = (buffer << 6) | static_cast<unsigned>(v);
    if ((bits += 6) >= 8) out += static_cast<char>((buffer >> (bits -= 8)) & 0xFF);
  }
  return out;
}

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string git(const std::string& args, const fs::path& cwd) {
  Command c;
  c.shell = "git " + args;
  if (!cwd.empty()) c.cwd = cwd.string();
  c.timeout_s = 60;
  c.env = {{"GIT_CONFIG_NOSYSTEM", "1"}, {"GIT_TERMINAL_PROMPT", "0"}};
  const Outcome o = run(c);
  if (!o.ok()) throw std::runtime_error("git " + args + ": " + o.describe() + "\n" + o.err);
  return o.out;
}

GitServer::GitServer(std::string token) : token_(std::move(token)) {
  signal(SIGPIPE, SIG_IGN);  // a CGI program that exits early must not kill the test
  root_ = make_unique_dir(fs::temp_directory_path(), "maxcode-git-server-");
  server_ = std::make_unique<httplib::Server>();

  auto handle = [this](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader* body) {
    ++requests_;
    const std::string credentials = decode_basic(req.get_header_value("Authorization"));
    const bool ok = token_ == "*" ? credentials.rfind("x-access-token:", 0) == 0 && credentials.size() > 15
                                  : credentials == "x-access-token:" + token_;
    if (!ok) {
      ++refused_;
      res.status = 401;
      res.set_header("WWW-Authenticate", "Basic realm=\"maxcode test git\"");
      res.set_content("authentication required\n", "text/plain");
      return;
    }
    std::string query;
    for (const auto& [key, value] : req.params) query += (query.empty() ? "" : "&") + key + "=" + value;
    std::vector<std::string> env = {
        "GIT_PROJECT_ROOT=" + root_.string(), "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER=x-access-token",
        "REMOTE_ADDR=127.0.0.1", "REQUEST_METHOD=" + req.method, "PATH_INFO=" + req.path,
        "QUERY_STRING=" + query, "CONTENT_TYPE=" + req.get_header_value("Content-Type"),
        "GATEWAY_INTERFACE=CGI/1.1", "SERVER_PROTOCOL=HTTP/1.1"};
    if (req.has_header("Content-Encoding")) env.push_back("HTTP_CONTENT_ENCODING=" + req.get_header_value("Content-Encoding"));
    if (req.has_header("Git-Protocol")) env.push_back("HTTP_GIT_PROTOCOL=" + req.get_header_value("Git-Protocol"));
    auto cgi = spawn_backend(env);
    if (body) {
      // The body streams into the program as it arrives (no CONTENT_LENGTH: read to EOF).
      (*body)([&](const char* data, std::size_t size) { return write_all(cgi->in, data, size); });
    }
    close(cgi->in);
    cgi->in = -1;

    // CGI headers first: "Status: 200 OK", "Content-Type: ...", a blank line.
    std::string head, chunk;
    std::size_t end = std::string::npos, skip = 0;
    while (end == std::string::npos && cgi->next(chunk)) {
      head += chunk;
      if ((end = head.find("\r\n\r\n")) != std::string::npos) skip = 4;
      else if ((end = head.find("\n\n")) != std::string::npos) skip = 2;
    }
    if (end == std::string::npos) {
      res.status = 500;
      res.set_content("git http-backend wrote no headers\n", "text/plain");
      return;
    }
    res.status = 200;
    std::string content_type = "application/octet-stream";
    std::size_t at = 0;
    while (at < end) {
      std::size_t eol = head.find('\n', at);
      if (eol == std::string::npos || eol > end) eol = end;
      std::string line = head.substr(at, eol - at);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      at = eol + 1;
      const std::size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      const std::string name = line.substr(0, colon);
      std::string value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.erase(value.begin());
      if (name == "Status") res.status = std::stoi(value);
      else if (name == "Content-Type") content_type = value;
      else res.set_header(name, value);
    }
    auto rest = std::make_shared<std::string>(head.substr(end + skip));
    res.set_chunked_content_provider(
        content_type,
        [cgi, rest](std::size_t, httplib::DataSink& sink) {
          if (!rest->empty()) {
            sink.write(rest->data(), rest->size());
            rest->clear();
            return true;
          }
          std::string chunk;
          if (cgi->next(chunk)) sink.write(chunk.data(), chunk.size());
          else sink.done();
          return true;
        },
        [cgi](bool) {});
  };
  server_->Get(".*", [handle](const httplib::Request& req, httplib::Response& res) { handle(req, res, nullptr); });
  server_->Post(".*", [handle](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader) {
    handle(req, res, &reader);
  });
  port_ = server_->bind_to_any_port("127.0.0.1");
  if (port_ <= 0) throw std::runtime_error("git server: cannot bind to loopback");
  thread_ = std::thread([this] { server_->listen_after_bind(); });
}

GitServer::~GitServer() {
  server_->stop();
  if (thread_.joinable()) thread_.join();
  std::error_code ignored;
  fs::remove_all(root_, ignored);
}

std::string GitServer::url(const std::string& relative) const {
  return "http://127.0.0.1:" + std::to_string(port_) + "/" + relative;
}

std::string GitServer::create_repo(const std::string& relative, const fs::path& source, const std::string& branch) {
  const fs::path bare = root_ / relative;
  fs::create_directories(bare);
  git("init -q --bare -b " + quote(branch), bare);
  const fs::path work = make_unique_dir(fs::temp_directory_path(), "maxcode-git-seed-");
  copy_tree(source, work, {".git"});
  git("init -q -b " + quote(branch), work);
  git("add -A", work);
  git("-c user.name=Maintainer -c user.email=maintainer@example.com commit -q -m 'Initial commit'", work);
  git("push -q " + quote(bare.string()) + " HEAD:refs/heads/" + quote(branch), work);
  const std::string sha = git("rev-parse HEAD", work);
  std::error_code ignored;
  fs::remove_all(work, ignored);
  return sha.substr(0, sha.find('\n'));
}

void GitServer::protect(const std::string& relative, const std::string& branch) {
  const fs::path hook = root_ / relative / "hooks" / "pre-receive";
  write_file(hook,
             "#!/bin/sh\n"
             "while read old new ref; do\n"
             "  if [ \"$ref\" = \"refs/heads/" + branch + "\" ]; then\n"
             "    echo \"error: GH006: Protected branch update failed for $ref.\" >&2\n"
             "    exit 1\n"
             "  fi\n"
             "done\n");
  fs::permissions(hook, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
}

}  // namespace maxcode::testing
