#include "bot/service/runner_client.h"

#include <httplib.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <thread>

#include <nlohmann/json.hpp>

#include "bot/github/git_remote.h"
#include "runner/util/files.h"
#include "runner/util/json_io.h"
#include "runner/util/process.h"

namespace maxcode::bot::service {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

void say(const std::string& line) { std::cerr << "maxcode runner: " << line << std::endl; }

class Api {
 public:
  Api(const RunnerOptions& o) : client_(o.server), token_(o.token) {
    client_.set_connection_timeout(10, 0);
    client_.set_read_timeout(static_cast<time_t>(o.wait_s) + 30, 0);
    client_.set_write_timeout(60, 0);
  }
  // {status, body}; status 0 = no answer.
  std::pair<int, json> post(const std::string& path, const json& body) {
    httplib::Headers headers{{"Authorization", "Bearer " + token_}};
    auto r = client_.Post(path.c_str(), headers, dump_json(body), "application/json");
    if (!r) return {0, json{{"error", httplib::to_string(r.error())}}};
    json answer = json::parse(r->body, nullptr, false);
    return {r->status, answer.is_discarded() ? json() : answer};
  }

 private:
  httplib::Client client_;
  std::string token_;
};

std::string self_exe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "maxcode";
}

// The job's command in its own process group, its output to `log_file`. The child dies
// with the runner (PDEATHSIG), so a killed runner leaves no job behind.
pid_t spawn(const std::string& command, const fs::path& cwd, const fs::path& log_file) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  const int fd = open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd >= 0) {
    dup2(fd, 1);
    dup2(fd, 2);
    close(fd);
  }
  const int null = open("/dev/null", O_RDONLY);
  if (null >= 0) dup2(null, 0);
  if (chdir(cwd.c_str()) != 0) _exit(127);
  const std::string exec = "exec " + command;
  execl("/bin/sh", "sh", "-c", exec.c_str(), static_cast<char*>(nullptr));
  _exit(127);
}

std::string tail_of(const fs::path& file, std::size_t bytes) {
  if (!fs::exists(file)) return "";
  const std::string text = read_text(file);
  return text.size() > bytes ? text.substr(text.size() - bytes) : text;
}

struct RunOutcome {
  std::string status;  // finished | failed | cancelled | lost
  int exit_code = -1;
  std::string error;
};

RunOutcome run_job(const RunnerOptions& o, Api& api, const json& job, const fs::path& dir) {
  const std::int64_t id = job["id"];
  const std::string lease = job["lease"];
  const json& source = job["source"];
  // 1. The source, with the read-only token, into a private repository; then a plain
  //    local clone at the job's commit (no token involved).
  try {
    GitRemote remote(dir / "git", source.value("url", std::string()), source.value("token", std::string()));
    remote.fetch();
    const std::string commit = source.value("commit", std::string());
    if (!remote.has_commit(commit)) return {"failed", -1, "commit " + commit + " is not in the repository"};
    Command c;
    c.shell = "git --git-dir " + shell_quote((dir / "git").string()) + " update-ref refs/heads/maxcode-job " + commit +
              " && git clone -q -b maxcode-job " + shell_quote((dir / "git").string()) + " " +
              shell_quote((dir / "src").string());
    c.timeout_s = 600;
    const Outcome cloned = run(c);
    if (!cloned.ok()) return {"failed", -1, "local checkout failed: " + cloned.tail(800)};
  } catch (const std::exception& e) {
    return {"failed", -1, std::string("fetching the repository failed: ") + e.what()};
  }
  // 2. The job input document, pointing at the checkout.
  json document = job["document"];
  document["repository"] = (dir / "src").string();
  document["delivery"] = json{{"mode", "none"}};  // the service opens the PR from the results
  write_text(dir / "job.json", dump_json(document, 2));
  const std::string base = o.run_command.empty() ? shell_quote(self_exe()) + " run" : o.run_command;
  const std::string command = base + " --job " + shell_quote((dir / "job.json").string()) + " --out " +
                              shell_quote((dir / "out").string());
  // 3. Run it, heartbeating.
  const pid_t pid = spawn(command, dir, dir / "run.log");
  if (pid < 0) return {"failed", -1, std::string("fork failed: ") + std::strerror(errno)};
  const auto started = Clock::now();
  auto next_beat = Clock::now();
  for (;;) {
    int status = 0;
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      if (WIFEXITED(status)) {
        if (WEXITSTATUS(status) == 127) return {"failed", 127, "could not start: " + tail_of(dir / "run.log", 800)};
        return {"finished", WEXITSTATUS(status), ""};
      }
      return {"failed", -1, "the job was killed by signal " + std::to_string(WTERMSIG(status)) + ": " + tail_of(dir / "run.log", 800)};
    }
    if (Clock::now() - started > std::chrono::duration<double>(o.job_timeout_s)) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      return {"failed", -1, "the job ran past the runner's limit"};
    }
    if (Clock::now() >= next_beat) {
      const auto [code, answer] = api.post("/api/runner/jobs/" + std::to_string(id) + "/heartbeat", {{"lease", lease}});
      if (code == 409 || (code == 200 && answer.value("state", std::string()) == "cancel")) {
        kill(-pid, SIGKILL);
        waitpid(pid, &status, 0);
        if (code == 409) return {"lost", -1, "the service says this runner no longer holds the job"};
        return {"cancelled", -1, "cancelled"};
      }
      if (code != 200) say("heartbeat for job " + std::to_string(id) + " got no answer (" + dump_json(answer) + "); going on");
      next_beat = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.heartbeat_s));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// What the job left in DIR/out: job.json and the targets' result files.
json collect(const fs::path& out) {
  json targets = json::object();
  if (fs::is_directory(out / "targets"))
    for (const auto& entry : fs::directory_iterator(out / "targets")) {
      if (!entry.is_directory()) continue;
      json files = json::object();
      for (const char* name : {"result.json", "patch.diff", "report.md", "report.html", "trajectory.jsonl"})
        if (fs::is_regular_file(entry.path() / name) && fs::file_size(entry.path() / name) < (16u << 20))
          files[name] = read_text(entry.path() / name);
      targets[entry.path().filename().string()] = files;
    }
  return targets;
}

}  // namespace

int run_runner(const RunnerOptions& options) {
  RunnerOptions o = options;
  if (o.name.empty()) {
    char host[256] = "runner";
    gethostname(host, sizeof host - 1);
    o.name = std::string(host) + "-" + std::to_string(getpid());
  }
  for (char& c : o.name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '-';
  if (o.work_dir.empty()) o.work_dir = fs::temp_directory_path() / ("maxcode-runner-" + o.name);
  fs::create_directories(o.work_dir);
  signal(SIGPIPE, SIG_IGN);
  Api api(o);
  int jobs_done = 0;
  auto idle_since = Clock::now();
  double backoff = 1;
  say(o.name + " polling " + o.server);
  for (;;) {
    if (o.max_jobs > 0 && jobs_done >= o.max_jobs) return 0;
    if (o.idle_exit_s > 0 && Clock::now() - idle_since > std::chrono::duration<double>(o.idle_exit_s)) return 0;
    const auto [code, answer] = api.post("/api/runner/claim", {{"runner", o.name}, {"labels", o.labels}, {"wait_s", o.wait_s}});
    if (code == 204) {
      backoff = 1;
      continue;
    }
    if (code == 401) {
      say("the service refused the runner token (401)");
      return 1;
    }
    if (code != 200 || !answer.contains("job")) {
      say("claim failed (" + (code ? "HTTP " + std::to_string(code) : answer.value("error", std::string("no answer"))) +
          "); retrying in " + std::to_string(static_cast<int>(backoff)) + " s");
      std::this_thread::sleep_for(std::chrono::duration<double>(backoff));
      backoff = std::min(backoff * 2, 60.0);
      continue;
    }
    backoff = 1;
    const json& job = answer["job"];
    const std::int64_t id = job["id"];
    const fs::path dir = o.work_dir / ("job-" + std::to_string(id) + "-" + std::to_string(job.value("attempt", 0)));
    std::error_code ignored;
    fs::remove_all(dir, ignored);
    fs::create_directories(dir);
    say("job " + std::to_string(id) + " (attempt " + std::to_string(job.value("attempt", 0)) + ")");
    const RunOutcome outcome = run_job(o, api, job, dir);
    ++jobs_done;
    idle_since = Clock::now();
    if (outcome.status == "lost") {
      say("job " + std::to_string(id) + ": " + outcome.error);
      continue;
    }
    json body{{"lease", job["lease"]}, {"status", outcome.status}, {"exit_code", outcome.exit_code}, {"error", outcome.error},
              {"log", tail_of(dir / "run.log", 4000)}};
    if (outcome.status == "finished") {
      body["targets"] = collect(dir / "out");
      if (fs::is_regular_file(dir / "out" / "job.json")) {
        json j = json::parse(read_text(dir / "out" / "job.json"), nullptr, false);
        if (!j.is_discarded()) body["job"] = j;
      }
    }
    for (int attempt = 1;; ++attempt) {
      const auto [status, reply] = api.post("/api/runner/jobs/" + std::to_string(id) + "/result", body);
      if (status == 200) {
        say("job " + std::to_string(id) + ": " + outcome.status + " (exit code " + std::to_string(outcome.exit_code) + "), reported");
        fs::remove_all(dir, ignored);
        break;
      }
      if (status == 409 || (status >= 400 && status < 500) || attempt >= 8) {
        say("job " + std::to_string(id) + ": the service did not take the result (" + std::to_string(status) + " " +
            dump_json(reply) + ")");
        break;
      }
      std::this_thread::sleep_for(std::chrono::seconds(std::min(attempt * 2, 30)));
    }
  }
}

}  // namespace maxcode::bot::service
