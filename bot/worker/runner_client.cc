#include "bot/worker/runner_client.h"

#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "bot/github/git_remote.h"
#include "bot/protocol/run_status.h"
#include "bot/worker/claimed_job.h"
#include "runner/util/beneath.h"
#include "runner/util/files.h"
#include "runner/util/json_io.h"
#include "runner/util/process.h"
#include "runner/util/slug.h"

namespace maxcode::bot::worker {

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
    // Read as any outside document is (json_io.h): a reply nested a million levels deep
    // is an error here, not a stack overflow; a reply that is not JSON is null.
    try {
      return {r->status, r->body.empty() ? json() : parse_json_input(r->body, "the service's reply")};
    } catch (const JsonInputError& e) {
      say(std::string(e.what()) + " (HTTP " + std::to_string(r->status) + ")");
      return {r->status, json()};
    }
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

// The last `bytes` of the job's log. The job's command wrote it, so it is read beneath
// the job's directory: a link there is not followed, a FIFO does not block.
std::string tail_of(const fs::path& dir, const std::string& name, std::size_t bytes) {
  int fd = -1;
  try {
    fd = open_file_beneath(dir, name);
  } catch (const BeneathError& e) {
    return e.kind() == BeneathError::Kind::kMissing ? "" : std::string("(log not read: ") + e.what() + ")";
  }
  const off_t size = lseek(fd, 0, SEEK_END);
  const off_t from = size > static_cast<off_t>(bytes) ? size - static_cast<off_t>(bytes) : 0;
  std::string text(static_cast<std::size_t>(std::max<off_t>(size - from, 0)), '\0');
  const ssize_t got = text.empty() ? 0 : pread(fd, text.data(), text.size(), from);
  close(fd);
  text.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  return text;
}

// The last non-empty line of `text`, without the carriage returns a progress bar uses.
std::string last_line(const std::string& text) {
  std::size_t end = text.find_last_not_of("\r\n ");
  if (end == std::string::npos) return "";
  const std::size_t begin = text.find_last_of("\r\n", end);
  return text.substr(begin == std::string::npos ? 0 : begin + 1, end + 1 - (begin == std::string::npos ? 0 : begin + 1));
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct RunOutcome {
  RunStatus status = RunStatus::kFailed;
  int exit_code = -1;
  std::string error;
  bool lost = false;  // the service took the job back: nothing to report
};

// The job's command, run by the one process runner (process.h) on a thread of its own
// while this thread heartbeats. Its process group is killed on a cancel, a lost lease or
// the runner's limit, and whatever it left in the group when it ends; the child dies
// with the runner (PDEATHSIG), so a killed runner leaves no job behind.
class JobProcess {
 public:
  JobProcess(const std::string& command, const fs::path& cwd, double timeout_s) {
    Command c;
    // Its output goes to a file, not to memory: a job's log may be long, and the
    // runner reads back only its tail.
    c.shell = "exec " + command + " >run.log 2>&1";
    c.cwd = cwd.string();
    c.timeout_s = timeout_s;
    c.output_cap = 1u << 20;
    c.max_file_bytes = 0;
    // No limit is meant, only a group: a process cap far above any job's makes one
    // where the machine allows (cgroup.h), so that every process the job started, one
    // that left for a session of its own included, ends with it.
    c.max_processes = 1 << 20;
    c.started = [this](long pid) {
      std::lock_guard lock(mutex_);
      pid_ = static_cast<pid_t>(pid);
    };
    thread_ = std::thread([this, c] {
      Outcome o = run(c);
      std::lock_guard lock(mutex_);
      pid_ = 0;  // reaped: its id may be reused, never signal it again
      outcome_ = std::move(o);
    });
  }
  ~JobProcess() {
    kill_group();
    if (thread_.joinable()) thread_.join();
  }
  // The outcome once the command is over.
  std::optional<Outcome> done() {
    std::lock_guard lock(mutex_);
    return outcome_;
  }
  void kill_group() {
    std::lock_guard lock(mutex_);
    // Until run() returns, the child is not reaped (it reaps after killing its group),
    // so pid_ is still this job's group.
    if (pid_ > 0) kill(-pid_, SIGKILL);
  }
  void wait() { thread_.join(); }

 private:
  std::mutex mutex_;
  pid_t pid_ = 0;
  std::optional<Outcome> outcome_;
  std::thread thread_;
};

// The source, with the read-only token, into a private repository; then a plain local
// clone at the job's commit (no token involved). The failure, if any.
std::optional<RunOutcome> fetch_source(const ClaimedJob& job, const fs::path& dir) {
  try {
    GitRemote remote(dir / "git", job.url, job.token);
    remote.fetch();
    if (!remote.has_commit(job.commit))
      return RunOutcome{RunStatus::kFailed, -1, "commit " + job.commit + " is not in the repository"};
    Command c;
    c.shell = "git --git-dir " + shell_quote((dir / "git").string()) + " update-ref refs/heads/maxcode-job " +
              shell_quote(job.commit) + " && git clone -q -b maxcode-job " + shell_quote((dir / "git").string()) +
              " " + shell_quote((dir / "src").string());
    c.timeout_s = 600;
    const Outcome cloned = run(c);
    if (!cloned.ok()) return RunOutcome{RunStatus::kFailed, -1, "local checkout failed: " + cloned.tail(800)};
  } catch (const std::exception& e) {
    return RunOutcome{RunStatus::kFailed, -1, std::string("fetching the repository failed: ") + e.what()};
  }
  return std::nullopt;
}

// The job input document, pointing at the checkout; the command that runs it.
std::string prepare_command(const RunnerOptions& o, const ClaimedJob& job, const fs::path& dir) {
  json document = job.document;
  document["repository"] = (dir / "src").string();
  document["delivery"] = json{{"mode", "none"}};  // the service opens the PR from the results
  write_text(dir / "job.json", dump_json(document, 2));
  const std::string base = o.run_command.empty() ? shell_quote(self_exe()) + " run" : o.run_command;
  return base + " --job " + shell_quote((dir / "job.json").string()) + " --out " + shell_quote((dir / "out").string());
}

RunOutcome finished(const Outcome& done, const fs::path& dir) {
  if (done.spawn_failed) return {RunStatus::kFailed, -1, "could not start: " + done.spawn_error};
  if (done.timed_out) return {RunStatus::kFailed, -1, "the job ran past the runner's limit"};
  if (done.term_signal != 0)
    return {RunStatus::kFailed, -1, "the job was " + done.describe() + ": " + tail_of(dir, "run.log", 800)};
  if (done.exit_code == 127) return {RunStatus::kFailed, 127, "could not start: " + tail_of(dir, "run.log", 800)};
  return {RunStatus::kFinished, done.exit_code, ""};
}

// One heartbeat: the job's latest progress line shown (the operator watching a runner
// sees where its job is), and the lease renewed. The outcome when the service took the
// job back or cancelled it (the job is killed then).
std::optional<RunOutcome> heartbeat(Api& api, const ClaimedJob& job, const fs::path& dir, JobProcess& process,
                                    Clock::time_point started, std::string& shown) {
  if (std::string line = last_line(tail_of(dir, "run.log", 2000)); !line.empty() && line != shown) {
    say("job " + std::to_string(job.id) + " (" + std::to_string(static_cast<long long>(seconds_since(started))) +
        " s): " + excerpt(line, 200));
    shown = std::move(line);
  }
  const auto [code, answer] =
      api.post("/api/runner/jobs/" + std::to_string(job.id) + "/heartbeat", {{"lease", job.lease}});
  const bool cancel = code == 200 && answer.is_object() && answer.value("state", json()) == "cancel";
  if (code == 409 || cancel) {
    process.kill_group();
    process.wait();
    if (code == 409)
      return RunOutcome{RunStatus::kFailed, -1, "the service says this runner no longer holds the job", true};
    return RunOutcome{RunStatus::kCancelled, -1, "cancelled"};
  }
  if (code != 200)
    say("heartbeat for job " + std::to_string(job.id) + " got no answer (" + excerpt(dump_json(answer), 200) +
        "); going on");
  return std::nullopt;
}

RunOutcome run_job(const RunnerOptions& o, Api& api, const ClaimedJob& job, const fs::path& dir) {
  if (std::optional<RunOutcome> failed = fetch_source(job, dir)) return *failed;
  const std::string command = prepare_command(o, job, dir);
  // Run it, heartbeating.
  JobProcess process(command, dir, o.job_timeout_s);
  auto next_beat = Clock::now();
  const auto started = Clock::now();
  std::string shown;
  for (;;) {
    if (const std::optional<Outcome> done = process.done()) return finished(*done, dir);
    if (Clock::now() >= next_beat) {
      if (std::optional<RunOutcome> ended = heartbeat(api, job, dir, process, started, shown)) return *ended;
      next_beat = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.heartbeat_s));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

constexpr std::size_t kMaxResultFile = 16u << 20;

// What the job left in DIR/out: its job.json and the targets' result files. The job ran
// candidates' code; everything is read beneath DIR/out, so a link planted there (to the
// runner's token file, a host secret) is skipped with a note, never followed.
json collect(const fs::path& out, std::vector<std::string>& skipped) {
  json targets = json::object();
  std::vector<BeneathEntry> slugs;
  try {
    slugs = list_beneath(out, "targets");
  } catch (const BeneathError& e) {
    if (e.kind() != BeneathError::Kind::kMissing) skipped.push_back(e.what());
    return targets;
  }
  for (const BeneathEntry& slug : slugs) {
    if (slug.kind != BeneathEntry::Kind::kDirectory || !safe_result_name(slug.name)) {
      skipped.push_back("targets/" + slug.name + ": not a target directory");
      continue;
    }
    json files = json::object();
    for (const char* name : {"result.json", "patch.diff", "report.md", "report.html", "trajectory.jsonl"}) {
      try {
        files[name] = read_beneath(out, fs::path("targets") / slug.name / name, kMaxResultFile);
      } catch (const BeneathError& e) {
        if (e.kind() != BeneathError::Kind::kMissing) skipped.push_back(e.what());
      }
    }
    targets[slug.name] = files;
  }
  return targets;
}

// Every string in `value` with the runner's own paths replaced: the checkout by the
// repository's URL, the rest of the job's directory by "JOB_DIR". What the runner reports
// ends up on GitHub (replies, check runs, report.md), which has no use for the runner's
// layout and should not learn it.
json without_runner_paths(json value, const fs::path& dir, const std::string& url) {
  if (value.is_string()) {
    std::string text = value.get<std::string>();
    for (const auto& [from, to] : {std::pair{(dir / "src").string(), url}, std::pair{dir.string(), std::string("JOB_DIR")}})
      for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    return text;
  }
  if (value.is_structured())
    for (auto& item : value) item = without_runner_paths(std::move(item), dir, url);
  return value;
}

// The result body for the service.
json result_body(const ClaimedJob& job, const RunOutcome& outcome, const fs::path& dir) {
  json body{{"lease", job.lease},
            {"status", run_status_name(outcome.status)},
            {"exit_code", outcome.exit_code},
            {"error", outcome.error},
            {"log", tail_of(dir, "run.log", 4000)}};
  if (outcome.status != RunStatus::kFinished) return without_runner_paths(std::move(body), dir, job.url);
  std::vector<std::string> skipped;
  body["targets"] = collect(dir / "out", skipped);
  try {
    body["job"] = parse_json_input(read_beneath(dir / "out", "job.json", kMaxResultFile), "out/job.json");
  } catch (const std::exception& e) {
    if (!(find_error<BeneathError>(e) && find_error<BeneathError>(e)->kind() == BeneathError::Kind::kMissing))
      skipped.push_back(e.what());
  }
  if (!skipped.empty()) {
    std::string note = "not read back from the job's output:";
    for (const std::string& s : skipped) note += "\n  " + s;
    say(note);
    body["log"] = body["log"].get<std::string>() + "\nmaxcode runner: " + note;
  }
  return without_runner_paths(std::move(body), dir, job.url);
}

// Reports the outcome of job `id`; false when a 4xx (or eight failed tries) gave up on it.
bool report(Api& api, std::int64_t id, const json& body) {
  for (int attempt = 1;; ++attempt) {
    const auto [status, reply] = api.post("/api/runner/jobs/" + std::to_string(id) + "/result", body);
    if (status == 200) {
      say("job " + std::to_string(id) + ": " + body.value("status", std::string()) + " (exit code " +
          std::to_string(body.value("exit_code", -1)) + "), reported");
      return true;
    }
    if ((status >= 400 && status < 500) || attempt >= 8) {
      say("job " + std::to_string(id) + ": the service did not take the result (" + std::to_string(status) + " " +
          excerpt(dump_json(reply), 200) + ")");
      return false;
    }
    std::this_thread::sleep_for(std::chrono::seconds(std::min(attempt * 2, 30)));
  }
}

// One claimed job from reading its description to reporting its outcome. Never throws:
// whatever goes wrong on the runner's side is reported as the job's failure.
void handle(const RunnerOptions& o, Api& api, const json& claimed) {
  const ClaimReading reading = read_claimed_job(claimed);
  if (!reading.job) {
    say("the service's job is malformed: " + reading.error);
    if (reading.id > 0 && !reading.lease.empty())
      report(api, reading.id,
             {{"lease", reading.lease},
              {"status", run_status_name(RunStatus::kFailed)},
              {"exit_code", -1},
              {"error", "the runner could not read the job: " + reading.error},
              {"log", ""}});
    return;
  }
  const ClaimedJob& job = *reading.job;
  const fs::path dir = o.work_dir / ("job-" + std::to_string(job.id) + "-" + std::to_string(job.attempt));
  say("job " + std::to_string(job.id) + " (attempt " + std::to_string(job.attempt) + ")");
  json body;
  try {
    remove_tree(dir);
    fs::create_directories(dir);
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);
    const RunOutcome outcome = run_job(o, api, job, dir);
    if (outcome.lost) {
      say("job " + std::to_string(job.id) + ": " + outcome.error);
      remove_tree(dir);
      return;
    }
    body = result_body(job, outcome, dir);
  } catch (const std::exception& e) {
    body = {{"lease", job.lease},
            {"status", run_status_name(RunStatus::kFailed)},
            {"exit_code", -1},
            {"error", std::string("the runner failed: ") + e.what()},
            {"log", tail_of(dir, "run.log", 4000)}};
  }
  // What the service did not take stays on disk for the operator, as the log says.
  if (report(api, job.id, body)) remove_tree(dir);
  else say("job " + std::to_string(job.id) + ": its output is kept in " + dir.string());
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
    json claim{{"runner", o.name}, {"labels", o.labels}, {"wait_s", o.wait_s}};
    if (o.job_id) claim["job"] = o.job_id;
    const auto [code, answer] = api.post("/api/runner/claim", claim);
    if (code == 204) {
      backoff = 1;
      continue;
    }
    if (code == 410 && o.job_id) {
      say(answer.value("error", std::string("job ") + std::to_string(o.job_id) + " is not waiting to run") + "; stopping");
      return 0;
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
    handle(o, api, answer["job"]);
    ++jobs_done;
    idle_since = Clock::now();
  }
}

}  // namespace maxcode::bot::worker
