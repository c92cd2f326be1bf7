// `maxcode runner` against a service that hands it hostile jobs (issue 22): replies that
// are not what the protocol says, and a job whose output plants links and FIFOs where
// the result files go and leaves a daemon behind. The runner must report what it can,
// follow no link, block on no FIFO, leave no process and keep polling. The service here
// is a cpp-httplib server speaking the runner protocol (runner_protocol.h); the
// repository comes from a real git server on loopback.
#include "bot/worker/runner_client.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <deque>
#include <mutex>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "runner/util/cgroup.h"
#include "runner/util/files.h"
#include "support/git_server.h"
#include "support/test_support.h"

namespace maxcode::bot::worker {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// The service's side: claims answered from a script, results kept.
class ScriptedService {
 public:
  ScriptedService() {
    server_.Post("/api/runner/claim", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard lock(mutex_);
      if (claims_.empty()) {
        res.status = 204;
        return;
      }
      res.status = 200;
      res.set_content(claims_.front(), "application/json");
      claims_.pop_front();
    });
    server_.Post(R"(/api/runner/jobs/(\d+)/heartbeat)", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"state": "held"})", "application/json");
    });
    server_.Post(R"(/api/runner/jobs/(\d+)/result)", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mutex_);
      const std::int64_t id = std::stoll(req.matches[1]);
      if (refuse_.count(id)) {  // as the service answers a runner that lost the lease
        refused_[id] = json::parse(req.body);
        res.status = 409;
        res.set_content(R"({"error": "not the holder"})", "application/json");
        return;
      }
      results_[id] = json::parse(req.body);
      res.set_content("{}", "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~ScriptedService() {
    server_.stop();
    thread_.join();
  }
  void add_claim(const std::string& body) {
    std::lock_guard lock(mutex_);
    claims_.push_back(body);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::map<std::int64_t, json> results() {
    std::lock_guard lock(mutex_);
    return results_;
  }
  void refuse_result_of(std::int64_t id) {
    std::lock_guard lock(mutex_);
    refuse_.insert(id);
  }
  std::map<std::int64_t, json> refused() {
    std::lock_guard lock(mutex_);
    return refused_;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::deque<std::string> claims_;
  std::map<std::int64_t, json> results_, refused_;
  std::set<std::int64_t> refuse_;
};

json job(std::int64_t id, const json& document, const json& source) {
  return {{"job", {{"id", id}, {"lease", "L" + std::to_string(id)}, {"attempt", 1}, {"document", document},
                   {"source", source}}}};
}

TEST(RunnerClient, HostileJobsAreReportedNoLinkIsFollowedAndNoProcessIsLeft) {
  testing::TempDir dir;
  testing::GitServer git("s3cret");
  const std::string commit = git.create_repo("acme/histo.git", testing::source_path("examples/cpu-histogram"));
  const json source{{"url", git.url("acme/histo.git")}, {"token", "s3cret"}, {"commit", commit}};
  const fs::path secret = dir / "runner-secret.txt";
  write_text(secret, "TOP-SECRET-RUNNER-FILE");
  const fs::path daemon_pid = dir / "daemon.pid";
  // The job's command: what a job that ran hostile code could leave in its output.
  const fs::path command = dir / "job.sh";
  write_text(command, "#!/bin/sh\nout=\"$4\"\n"
                      "mkdir -p \"$out/targets/histo\"\n"
                      "printf 'the diff' > \"$out/targets/histo/patch.diff\"\n"
                      "ln -s " + secret.string() + " \"$out/targets/histo/result.json\"\n"
                      "mkfifo \"$out/targets/histo/report.md\"\n"
                      "ln -s " + dir.path().string() + " \"$out/targets/linked\"\n"
                      "printf '{\"job\": 1, \"out\": \"%s\"}' \"$out\" > \"$out/job.json\"\n"
                      "setsid sh -c 'echo $$ > " + daemon_pid.string() + "; exec sleep 300' </dev/null >/dev/null 2>&1 &\n"
                      "while [ ! -s " + daemon_pid.string() + " ]; do sleep 0.05; done\n"
                      "echo 'searching: candidate 2 of 5'; sleep 1.5\n"
                      "echo the job ran, its output in \"$out\"\n");
  fs::permissions(command, fs::perms::owner_all);

  ScriptedService service;
  service.add_claim(R"({"job": {"id": "seven", "lease": "L"}})");                          // no usable id
  service.add_claim(job(7, json::array(), source).dump());                               // document not an object
  json injected = source;
  injected["commit"] = "$(touch " + (dir / "pwned").string() + ")";
  service.add_claim(job(8, json::object(), injected).dump());                            // a commit to a shell
  service.add_claim(std::string(100000, '[') + std::string(100000, ']'));                // nested 100,000 deep
  service.add_claim(job(9, {{"policy", "replay"}}, source).dump());                      // runs, output hostile
  service.add_claim(job(10, {{"policy", "replay"}}, source).dump());                     // its result refused
  service.refuse_result_of(10);

  RunnerOptions o;
  o.server = service.url();
  o.token = "runner-token";
  o.name = "hostile-test";
  o.run_command = command.string();
  o.work_dir = dir / "work";
  o.wait_s = 1;
  o.heartbeat_s = 0.5;
  o.max_jobs = 5;  // the deep reply is a failed claim, not a job
  ::testing::internal::CaptureStderr();
  const int runner_exit = run_runner(o);
  const std::string said = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(runner_exit, 0) << said;
  // While a job runs, the runner shows its latest progress line.
  EXPECT_NE(said.find("maxcode runner: job 9 ("), std::string::npos) << said;
  EXPECT_NE(said.find(" s): searching: candidate 2 of 5"), std::string::npos) << said;

  const auto results = service.results();
  ASSERT_EQ(results.size(), 3u) << "jobs 7, 8 and 9 are reported; the one without an id cannot be";
  EXPECT_EQ(results.at(7)["status"], "failed");
  EXPECT_NE(results.at(7)["error"].get<std::string>().find("job.document: expected an object"), std::string::npos)
      << results.at(7)["error"];
  EXPECT_EQ(results.at(8)["status"], "failed");
  EXPECT_NE(results.at(8)["error"].get<std::string>().find("job.source.commit: expected 40 or 64 hex digits"),
            std::string::npos)
      << results.at(8)["error"];
  EXPECT_FALSE(fs::exists(dir / "pwned"));

  const json& done = results.at(9);
  EXPECT_EQ(done["status"], "finished") << done.dump(2);
  EXPECT_EQ(done["exit_code"], 0);
  EXPECT_EQ(done["targets"], json({{"histo", {{"patch.diff", "the diff"}}}})) << done["targets"].dump(2);
  // The runner's own paths never leave it: they would end up on GitHub.
  EXPECT_EQ(done["job"], json({{"job", 1}, {"out", "JOB_DIR/out"}}));
  EXPECT_EQ(done.dump().find(o.work_dir.string()), std::string::npos) << done.dump(2);
  EXPECT_EQ(done.dump().find("TOP-SECRET"), std::string::npos) << "a link planted in the output was followed";
  const std::string log = done["log"];
  EXPECT_NE(log.find("the job ran, its output in JOB_DIR/out"), std::string::npos) << log;
  EXPECT_NE(log.find("not read back"), std::string::npos) << log;
  EXPECT_NE(log.find("targets/histo/result.json"), std::string::npos) << log;
  EXPECT_NE(log.find("targets/linked"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(o.work_dir / "job-9-1")) << "the job's directory is removed once reported";
  // A result the service did not take is not thrown away: its output stays for the operator.
  ASSERT_EQ(service.refused().count(10), 1u);
  EXPECT_EQ(service.refused().at(10)["status"], "finished");
  EXPECT_TRUE(fs::exists(o.work_dir / "job-10-1" / "out" / "targets" / "histo" / "patch.diff"));

  // The daemon left itself in a session of its own; the job's group (a cgroup where
  // this machine gives one) ends with the job.
  ASSERT_TRUE(fs::exists(daemon_pid));
  const pid_t daemon = std::stoi(read_text(daemon_pid));
  if (!cgroup_support().processes) GTEST_SKIP() << "no cgroup for a job here: " << cgroup_support().summary;
  bool gone = false;
  for (int i = 0; i < 50 && !gone; ++i) {
    // Killed and not yet reaped by whoever inherited it counts as gone.
    const std::string stat = fs::exists("/proc/" + std::to_string(daemon) + "/stat")
                                 ? read_text("/proc/" + std::to_string(daemon) + "/stat")
                                 : "";
    gone = kill(daemon, 0) != 0 || stat.find(") Z ") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!gone) kill(daemon, SIGKILL);
  EXPECT_TRUE(gone) << "the job's daemon " << daemon << " outlived the job";
}

}  // namespace
}  // namespace maxcode::bot::worker
