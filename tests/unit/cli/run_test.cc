// `maxcode run` end to end, on loopback: a repository with two hot functions
// (tests/fixtures/two-hot) on the test git server (git http-backend, basic auth) and
// as file:// and plain paths; PRs on the local GitHub, which checks every request
// against GitHub's OpenAPI description. No function is named: the job profiles.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <iostream>
#include <set>
#include <thread>

#include "runner/util/files.h"
#include "runner/util/process.h"
#include "support/git_server.h"
#include "support/github_api.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

Outcome maxcode(const std::string& args, const std::string& git_token = "s3cret") {
  Command c;
  c.shell = std::string(MAXCODE_BINARY) + " " + args;
  c.timeout_s = 500;
  c.env = {{"MAXCODE_GIT_TOKEN", git_token}, {"GITHUB_TOKEN", "s3cret"}, {"MAXCODE_APP_ID", ""}};
  return run(c);
}

// `maxcode <args>` in a process group of its own, so that a test can kill all of it.
pid_t spawn(const std::string& args, const fs::path& log) {
  const std::string command = std::string(MAXCODE_BINARY) + " " + args + " > '" + log.string() + "' 2>&1";
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    setenv("MAXCODE_GIT_TOKEN", "s3cret", 1);
    setenv("GITHUB_TOKEN", "s3cret", 1);
    setenv("MAXCODE_APP_ID", "", 1);
    // exec keeps the process (and so the group leader) the one we signal.
    execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

json job_json(const fs::path& out) {
  try {
    return json::parse(read_text(out / "job.json"));
  } catch (const std::exception&) {
    return json::object();
  }
}

// Waits (at most 5 minutes) until `ready` holds for job.json.
bool wait_for(const fs::path& out, const std::function<bool(const json&)>& ready) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (std::chrono::steady_clock::now() < deadline) {
    const json j = job_json(out);
    if (!j.empty() && ready(j)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return false;
}

class Run : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    github_ = testing::FakeGithub::get(&why);
    if (!github_) GTEST_SKIP() << why;
    github_->reset();
    base_ = server_.create_repo("acme/twohot.git", testing::source_path("tests/fixtures/two-hot"));
    github_->setup({{"repos", {{{"owner", "acme"}, {"name", "twohot"}, {"git_dir", bare().string()}}}},
                    {"tokens", {{{"token", "s3cret"}, {"login", "maxcode-bot"}, {"type", "Bot"},
                                 {"permissions", {{"pull_requests", "write"}, {"issues", "write"},
                                                  {"contents", "write"}}}}}}});
  }
  void TearDown() override {
    if (github_) github_->check_clean();
  }
  fs::path bare() const { return server_.root() / "acme/twohot.git"; }
  std::string delivery() const {
    return " --github-repo acme/twohot --api-url " + github_->url() + " --git-url " + server_.url("acme/twohot.git");
  }
  json pulls() { return github_->state()["repos"]["acme/twohot"]["pulls"]; }

  testing::FakeGithub* github_ = nullptr;
  testing::GitServer server_{"s3cret"};
  testing::TempDir dir_;
  std::string base_;
};

// A searched target: a winner has its confirmed speedup and its own PR; a target
// without one has no PR and says why. (On a loaded machine a true 1.6x can fail to
// confirm: that is the evaluator being honest, so tests accept it for one target.)
// Returns whether it won.
bool check_target(const json& t, const fs::path& out) {
  EXPECT_EQ(t["status"], "done") << t.dump(2);
  EXPECT_GT(t["share"].get<double>(), 0.05);
  EXPECT_GT(t["original_s"].get<double>(), 0);
  EXPECT_TRUE(fs::exists(out / t["result_dir"].get<std::string>() / "result.json"));
  if (t["verdict"] != "winner") {
    EXPECT_EQ(t["verdict"], "no winner");
    EXPECT_TRUE(t["pr"].is_null()) << t.dump(2);
    EXPECT_EQ(t["no_pr"], "no winner");
    return false;
  }
  EXPECT_GT(t["speedup"]["low"].get<double>(), 1.05) << t.dump(2);
  EXPECT_TRUE(fs::exists(out / t["result_dir"].get<std::string>() / "patch.diff"));
  EXPECT_TRUE(t["pr"].is_object()) << t.dump(2);
  return t["pr"].is_object();
}

std::string branch_of(const json& t) {
  return t["function"] == "dot" ? "maxcode/src-dot-cpp/dot" : "maxcode/src-sum-cpp/sum_squares";
}

TEST_F(Run, OverHttpWithATokenOpensOnePrPerTargetAndASecondRunUpdatesThem) {
  const fs::path out = dir_ / "first";
  const Outcome first = maxcode("run " + server_.url("acme/twohot.git") + " --max-targets 2 --out " + out.string() +
                                delivery());
  ASSERT_EQ(first.exit_code, 0) << first.err;
  std::cout << first.out;
  json job = job_json(out);
  EXPECT_EQ(job["status"], "completed");
  EXPECT_EQ(job["commit"], base_);
  EXPECT_EQ(job["ref"], "refs/heads/main");
  ASSERT_EQ(job["targets"].size(), 2u) << job.dump(2);
  // Both take about half of the time: either may be first (the hotter one is).
  const std::set<std::string> functions{job["targets"][0]["function"], job["targets"][1]["function"]};
  EXPECT_EQ(functions, (std::set<std::string>{"sum_squares", "dot"}));
  EXPECT_GE(job["targets"][0]["share"].get<double>(), job["targets"][1]["share"].get<double>());
  // One PR per winner, each created on its own deterministic branch.
  int winners = 0;
  for (const json& t : job["targets"]) {
    if (!check_target(t, out)) continue;
    ++winners;
    EXPECT_EQ(t["pr"]["number"], winners);
    EXPECT_EQ(t["pr"]["outcome"], "created");
    EXPECT_EQ(t["pr"]["branch"], branch_of(t));
  }
  ASSERT_GE(winners, 1) << job.dump(2);
  EXPECT_LE(job["spent"]["evaluations"].get<int>(), job["budget"]["evaluations"].get<int>());
  const std::string report = read_text(out / "report.html");
  for (const std::string part : {"sum_squares", "dot", "<svg", "Profile", "created #1"})
    EXPECT_NE(report.find(part), std::string::npos) << "report.html lacks " << part;
  EXPECT_NE(first.out.find("created #1"), std::string::npos) << first.out;  // the summary table
  json prs = pulls();
  ASSERT_EQ(static_cast<int>(prs.size()), winners);

  // The same repository and ref again: the same two PRs, updated, none added.
  const fs::path again = dir_ / "second";
  const Outcome second = maxcode("run " + server_.url("acme/twohot.git") + " --ref main --max-targets 2 --out " +
                                 again.string() + delivery() + " -q");
  ASSERT_EQ(second.exit_code, 0) << second.err;
  job = job_json(again);
  // Every PR of the first run is found again by its branch: updated or unchanged, never
  // a second PR for the same target.
  ASSERT_EQ(job["targets"].size(), 2u) << job.dump(2);
  for (const json& t : job["targets"]) {
    const bool won = check_target(t, again);
    const json* earlier = nullptr;
    for (const json& pr : prs)
      if (pr["head"] == branch_of(t)) earlier = &pr;
    if (!won || !earlier) continue;
    EXPECT_EQ(t["pr"]["number"], (*earlier)["number"]);
    EXPECT_TRUE(t["pr"]["outcome"] == "updated" || t["pr"]["outcome"] == "unchanged") << t["pr"].dump();
  }
  EXPECT_LE(pulls().size(), 2u);
  EXPECT_GE(pulls().size(), prs.size());
}

TEST_F(Run, KilledDuringTheSecondTargetResumesWithOnePrPerTarget) {
  const fs::path out = dir_ / "job";
  const pid_t pid = spawn("run file://" + bare().string() + " --max-targets 2 --out " + out.string() + delivery(),
                          dir_ / "first.log");
  const bool second_running = wait_for(out, [](const json& j) {
    return j["targets"].size() == 2 && j["targets"][1]["status"] == "running";
  });
  std::this_thread::sleep_for(std::chrono::seconds(4));  // into its baseline or search
  kill(-pid, SIGKILL);
  wait_exit(pid);
  ASSERT_TRUE(second_running) << read_text(dir_ / "first.log");
  json job = job_json(out);
  EXPECT_EQ(job["status"], "running");  // as the kill left it
  EXPECT_EQ(job["targets"][1]["status"], "running");
  const bool first_won = check_target(job["targets"][0], out);
  EXPECT_EQ(pulls().size(), first_won ? 1u : 0u);

  const Outcome resumed = maxcode("run --resume " + out.string());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("job: resuming"), std::string::npos) << resumed.err;
  EXPECT_NE(resumed.err.find("clone: reusing"), std::string::npos) << resumed.err;
  job = job_json(out);
  EXPECT_EQ(job["status"], "completed");
  EXPECT_EQ(check_target(job["targets"][0], out), first_won);  // kept as it was
  if (first_won) EXPECT_EQ(job["targets"][0]["pr"]["outcome"], "created");  // not delivered twice
  const bool second_won = check_target(job["targets"][1], out);
  if (second_won) EXPECT_EQ(job["targets"][1]["pr"]["outcome"], "created");
  EXPECT_EQ(pulls().size(), (first_won ? 1u : 0u) + (second_won ? 1u : 0u));  // one PR per winning target
}

TEST_F(Run, SigtermStopsCleanlyAndADryRunWritesThePr) {
  const fs::path out = dir_ / "job";
  const pid_t pid = spawn("run " + bare().string() + " --target sum_squares --dry-run --out " + out.string() +
                              delivery(),
                          dir_ / "first.log");
  const bool running = wait_for(out, [](const json& j) { return j["targets"].size() == 1 && j["targets"][0]["status"] == "running"; });
  kill(pid, SIGTERM);
  const int code = wait_exit(pid);
  ASSERT_TRUE(running) << read_text(dir_ / "first.log");
  EXPECT_EQ(code, 3) << read_text(dir_ / "first.log");
  json job = job_json(out);
  EXPECT_EQ(job["status"], "stopped");
  EXPECT_EQ(job["exit_code"], 3);
  EXPECT_EQ(job["targets"][0]["status"], "stopped");
  EXPECT_TRUE(fs::exists(out / "report.html"));

  const Outcome resumed = maxcode("run --resume " + out.string());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  job = job_json(out);
  EXPECT_EQ(job["status"], "completed");
  EXPECT_EQ(job["targets"][0]["share"], nullptr);  // named, not profiled
  // PASSES 8 -> 1 measures about 1.4x here against an A/A of +-15%: whether it confirms is
  // a timing, and on a loaded machine it once did not (1.19x [0.89, 1.31]). Then there is
  // no PR to write: a figure, printed; the stop and the resume above are this test's
  // subject (a dry run's PR is also checked by bot_e2e_test).
  if (job["targets"][0]["verdict"] == "no winner") {
    std::cout << "NOTE: no winner to write a PR for on this machine: " << job["targets"][0]["reason"] << "\n";
    EXPECT_EQ(job["targets"][0]["no_pr"], "no winner");
    EXPECT_EQ(github_->stats()["requests"], 0);
    return;
  }
  ASSERT_EQ(job["targets"][0]["pr"]["outcome"], "dry-run") << job["targets"][0].dump(2) << "\n" << resumed.err;
  const fs::path result = out / "targets/src-sum-cpp--sum_squares";
  EXPECT_EQ(read_text(result / "pr-branch.txt"), "maxcode/src-sum-cpp/sum_squares\n");
  EXPECT_EQ(read_text(result / "pr-title.txt").rfind("perf: speed up sum_squares ", 0), 0u);
  EXPECT_NE(resumed.out.find("branch: maxcode/src-sum-cpp/sum_squares\ntitle: perf: speed up sum_squares"),
            std::string::npos) << resumed.out;
  EXPECT_NE(resumed.out.find(read_text(result / "pr-body.md").substr(0, 300)), std::string::npos);
  EXPECT_EQ(github_->stats()["requests"], 0);  // a dry run asks GitHub nothing
}

TEST_F(Run, BadInputFailsClearlyAndOpensNothing) {
  auto failed = [&](const std::string& args, const std::string& name, const std::string& token = "s3cret") {
    const fs::path out = dir_ / name;
    const Outcome o = maxcode("run " + args + " --out " + out.string() + delivery() + " -q", token);
    json job = job_json(out);
    job["exit"] = o.exit_code;
    job["stderr"] = o.err;
    return job;
  };
  json job = failed(server_.url("acme/twohot.git"), "wrong-token", "expired");
  EXPECT_EQ(job["exit"], 1);
  EXPECT_EQ(job["status"], "failed");
  EXPECT_EQ(job["error_kind"], "clone-auth");
  EXPECT_NE(job["error"].get<std::string>().find("refused the credentials"), std::string::npos) << job["error"];

  job = failed(server_.url("acme/twohot.git") + " --ref no-such-ref", "missing-ref");
  EXPECT_EQ(job["exit"], 1);
  EXPECT_EQ(job["error_kind"], "clone-missing-ref");
  EXPECT_NE(job["error"].get<std::string>().find("ref 'no-such-ref' does not exist"), std::string::npos);

  job = failed("http://127.0.0.1:1/acme/none.git", "unreachable");
  EXPECT_EQ(job["exit"], 1);
  EXPECT_EQ(job["error_kind"], "clone-unreachable");

  testing::write_file(dir_ / "bare-repo/README", "no project file here\n");
  server_.create_repo("acme/plain.git", dir_ / "bare-repo");
  job = failed("file://" + (server_.root() / "acme/plain.git").string(), "no-config");
  EXPECT_EQ(job["exit"], 1);
  EXPECT_EQ(job["error_kind"], "no-config");
  EXPECT_NE(job["error"].get<std::string>().find("maxcode init"), std::string::npos) << job["error"];

  job = failed(bare().string() + " --budget evaluations=0", "zero-budget");
  EXPECT_EQ(job["exit"], 2);
  EXPECT_NE(job["stderr"].get<std::string>().find("budget.evaluations: must be >= 1, got 0"), std::string::npos)
      << job["stderr"];

  testing::write_file(dir_ / "scope.json", json({{"repository", bare().string()}, {"min_share", 0.99}}).dump());
  job = failed("--job " + (dir_ / "scope.json").string(), "nothing-in-scope");
  EXPECT_EQ(job["exit"], 1);
  EXPECT_EQ(job["error_kind"], "nothing-in-scope");
  EXPECT_NE(job["error"].get<std::string>().find("99.0% or more"), std::string::npos) << job["error"];
  EXPECT_NE(job["error"].get<std::string>().find("sum_squares"), std::string::npos) << job["error"];
  EXPECT_NE(read_text(dir_ / "nothing-in-scope/report.html").find("Profile"), std::string::npos);

  // An output directory that holds a job is never overwritten.
  job = failed(bare().string(), "nothing-in-scope");
  EXPECT_EQ(job["exit"], 2);
  EXPECT_EQ(job["error_kind"], "nothing-in-scope");  // the earlier job's record, untouched

  EXPECT_EQ(github_->stats()["requests"], 0);
  EXPECT_TRUE(pulls().empty());
}

}  // namespace
}  // namespace maxcode
