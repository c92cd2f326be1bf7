// The Slurm backend end to end on loopback: a real one-node Slurm cluster (munged,
// slurmctld, slurmd from scripts/slurm-local.sh), the real `maxcode serve` with `slurm`
// in its config, the local GitHub API and a real git server. A comment's job goes
// through sbatch to a `maxcode runner --job` on the node, and on to a pull request; the
// service is killed with SIGKILL while the batch job waits in Slurm's queue and again
// while it runs, and started again each time.
#include <gtest/gtest.h>

#include <thread>

#include "runner/util/files.h"
#include "support/fixture_repo.h"
#include "support/git_server.h"
#include "support/github_api.h"
#include "support/service_harness.h"
#include "support/slurm_cluster.h"
#include "support/test_support.h"

namespace maxcode::bot::service {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::ServiceProcess;

constexpr const char* kSecret = "webhook-secret-for-tests";
constexpr const char* kAdmin = "admin-token-for-tests";
constexpr const char* kRunner = "runner-token-for-tests";

const json kAppPermissions{{"contents", "write"}, {"pull_requests", "write"}, {"issues", "write"},
                           {"checks", "write"}, {"metadata", "read"}};

// acme/histo (the CPU histogram example, replay candidates) on the git server, the App
// installed on it on the local GitHub; returns the service config's github section.
json setup_repository(testing::FakeGithub& github, testing::GitServer& git_server, const fs::path& dir) {
  const fs::path source = dir / "source";
  testing::copy_example_with_short_timing("cpu-histogram", source);
  json config = json::parse(read_text(source / ".maxcode.json"));
  config["search"]["replay_dir"] = "replay";
  write_text(source / ".maxcode.json", config.dump(2));
  git_server.create_repo("acme/histo.git", source);
  const auto key = testing::make_app_key();
  write_text(dir / "app.pem", key.first);
  github.setup({{"repos", {{{"owner", "acme"}, {"name", "histo"}, {"git_dir", (git_server.root() / "acme/histo.git").string()},
                            {"collaborators", {{"alice", "write"}}}, {"issues", {{{"number", 1}, {"title", "histogram is slow"}}}}}}},
                {"apps", {{{"id", "4242"}, {"public_key", key.second},
                           {"installations", {{{"id", 77}, {"permissions", kAppPermissions}}}}}}}});
  std::string git_url = git_server.url("acme/histo.git");
  git_url = git_url.substr(0, git_url.find("acme/histo.git")) + "{owner}/{name}.git";
  return {{"api_url", github.url()}, {"app_id", "4242"}, {"app_key_file", (dir / "app.pem").string()}, {"git_url", git_url}};
}

// The batch jobs Slurm knows of (ended ones too) whose name is one of maxcode's.
std::vector<std::string> maxcode_batch_jobs(const testing::SlurmCluster& slurm) {
  std::vector<std::string> out;
  for (const std::string& line : slurm.all_jobs())
    if (line.find("|maxcode-job-") != std::string::npos) out.push_back(line);
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

TEST(SlurmBackend, ACommentBecomesAPullRequestThroughSlurmAndAKillLosesNothing) {
  if (const std::string why = testing::SlurmCluster::missing(); !why.empty()) GTEST_SKIP() << why;
  std::string why;
  testing::FakeGithub* github = testing::FakeGithub::get(&why);
  if (!github) GTEST_SKIP() << why;
  github->reset();
  testing::GitServer git_server("*");
  testing::TempDir dir;
  testing::SlurmCluster slurm(dir.path() / "slurm", 1);
  const json github_config = setup_repository(*github, git_server, dir.path());

  ServiceProcess service(MAXCODE_BINARY, dir.path(),
                         {{"github", github_config},
                          {"queue", {{"lease_s", 30}, {"backoff_s", 1}, {"long_poll_s", 2}}},
                          {"job", {{"policy", "replay"}, {"budget", {{"wall_s", 600}, {"evaluations", 1}}}}},
                          // --begin holds the batch job a while: the first kill lands between
                          // sbatch and the claim.
                          {"slurm", {{"gpus", 1}, {"setup_s", 300}, {"sbatch_args", {"--begin=now+8"}},
                                     {"runner_args", {"--heartbeat", "1", "--wait", "2", "--work-dir", (dir.path() / "runner").string()}}}}},
                         kSecret, kAdmin, kRunner);
  service.start();
  ASSERT_EQ(service.webhook("installation", "inst-1", testing::installation_created(77, "acme", {"histo"}).dump()).status, 202);
  ASSERT_EQ(service.webhook("issue_comment", "c-1", testing::comment_created("alice", "/maxcode optimize histogram --policy replay", 1, 501).dump()).status, 202);

  // SIGKILL after sbatch, before the batch job starts: the restarted service finds it in
  // squeue and submits no second one.
  std::vector<std::string> batch;
  for (int i = 0; i < 300 && batch.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    batch = maxcode_batch_jobs(slurm);
  }
  ASSERT_EQ(batch.size(), 1u) << service.process()->log();
  ASSERT_NE(batch[0].find("|maxcode-job-1-1|PENDING"), std::string::npos) << batch[0];
  service.kill9();
  service.start();

  // The batch job's runner claims the job: it runs on the node now.
  json jobs = service.wait_jobs([](const json& j) { return j["jobs"].size() == 1 && j["jobs"][0]["state"] != "queued"; }, 120);
  ASSERT_EQ(jobs["jobs"].size(), 1u) << jobs.dump(2) << service.process()->log();
  ASSERT_EQ(jobs["jobs"][0]["state"], "running") << jobs.dump(2) << service.process()->log() << joined(slurm.all_jobs());
  EXPECT_EQ(jobs["jobs"][0]["runner"], "maxcode-job-1-1");
  const std::vector<std::string> before = maxcode_batch_jobs(slurm);
  ASSERT_EQ(before.size(), 1u) << joined(before);
  EXPECT_NE(before[0].find("|maxcode-job-1-1|RUNNING"), std::string::npos) << before[0];

  // SIGKILL while the batch job runs; the runner keeps working, its heartbeats go
  // unanswered until the service is back.
  service.kill9();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  service.start();

  jobs = service.wait_jobs([](const json& j) { return j["jobs"][0]["state"] == "done" || j["jobs"][0]["state"] == "failed"; }, 300);
  const json job = jobs["jobs"][0];
  const fs::path output = dir.path() / "service.sqlite.d" / "jobs" / "1" / "slurm-attempt-1.out";
  const std::string batch_output = try_read_text(output).value_or("(no batch output at " + output.string() + ")");
  ASSERT_EQ(job["state"], "done") << job.dump(2) << "\nbatch output:\n" << batch_output << "\nservice log:\n" << service.process()->log();
  EXPECT_EQ(job["outcome"], "created") << job.dump(2);
  EXPECT_EQ(job["attempts"], 1) << "the attempt that ran through the kill is the only one";

  // One PR, one job, one batch job, ever: the restarted service found the batch job in
  // squeue and submitted none.
  const json state = github->state()["repos"]["acme/histo"];
  ASSERT_EQ(state["pulls"].size(), 1u) << state.dump(2);
  EXPECT_EQ(state["pulls"][0]["head"], "maxcode/src-histogram-cpp/histogram");
  EXPECT_EQ(job["pr_url"], github->url() + "/acme/histo/pull/2");
  EXPECT_EQ(service.jobs()["jobs"].size(), 1u);
  const std::vector<std::string> after = maxcode_batch_jobs(slurm);
  ASSERT_EQ(after.size(), 1u) << joined(after);
  EXPECT_NE(after[0].find("|maxcode-job-1-1|COMPLETED"), std::string::npos) << after[0] << "\nbatch output:\n" << batch_output;
  // What it asked Slurm for: a GPU, and the budget's 600 s plus setup_s 300 s.
  EXPECT_EQ(slurm.all_jobs("%j|%b|%l"), std::vector<std::string>{"maxcode-job-1-1|gres:gpu:1|15:00"});
  for (const char* log : {"serve-2.log", "serve-3.log"}) {
    const std::string text = read_text(dir.path() / log);
    EXPECT_EQ(text.find("Slurm job"), std::string::npos) << log << ": a restarted service submitted:\n" << text;
  }
  // The batch job's output is in the job's data directory: the runner's own log.
  EXPECT_NE(batch_output.find("maxcode-job-1-1 polling"), std::string::npos) << batch_output;
  EXPECT_NE(batch_output.find("job 1: finished"), std::string::npos) << batch_output;
  EXPECT_EQ(service.term(), 0);
  github->check_clean();
}

// `/maxcode cancel` of a job whose batch job waits in Slurm's queue (held by --begin):
// the job is cancelled and so is the batch job; nothing runs, and a runner that comes
// for it anyway stops.
TEST(SlurmBackend, CancelTakesThePendingBatchJobBack) {
  if (const std::string why = testing::SlurmCluster::missing(); !why.empty()) GTEST_SKIP() << why;
  std::string why;
  testing::FakeGithub* github = testing::FakeGithub::get(&why);
  if (!github) GTEST_SKIP() << why;
  github->reset();
  testing::GitServer git_server("*");
  testing::TempDir dir;
  testing::SlurmCluster slurm(dir.path() / "slurm", 1);
  ServiceProcess service(MAXCODE_BINARY, dir.path(),
                         {{"github", setup_repository(*github, git_server, dir.path())},
                          {"job", {{"policy", "replay"}}},
                          {"slurm", {{"sbatch_args", {"--begin=now+3600"}}}}},
                         kSecret, kAdmin, kRunner);
  service.start();
  ASSERT_EQ(service.webhook("installation", "inst-1", testing::installation_created(77, "acme", {"histo"}).dump()).status, 202);
  ASSERT_EQ(service.webhook("issue_comment", "c-1", testing::comment_created("alice", "/maxcode optimize histogram", 1, 501).dump()).status, 202);
  std::vector<std::string> batch;
  for (int i = 0; i < 300 && batch.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    batch = maxcode_batch_jobs(slurm);
  }
  ASSERT_EQ(batch.size(), 1u) << service.process()->log();
  EXPECT_NE(batch[0].find("|maxcode-job-1-1|PENDING"), std::string::npos) << batch[0];
  // What the batch job would start with, as slurmctld keeps it: the runner token, none of
  // the service's other secrets; the script runs the runner for this job only.
  const fs::path held = slurm.dir() / "state" / "hash.1" / "job.1";
  const std::string environment = read_text(held / "environment"), script = read_text(held / "script");
  EXPECT_NE(environment.find(std::string("MAXCODE_RUNNER_TOKEN=") + kRunner), std::string::npos);
  EXPECT_EQ(environment.find(kSecret), std::string::npos) << "the webhook secret reached the batch job";
  EXPECT_EQ(environment.find(kAdmin), std::string::npos) << "the admin token reached the batch job";
  EXPECT_NE(script.find("'runner' '--server' '" + service.url() + "' '--token-env' 'MAXCODE_RUNNER_TOKEN' '--job' '1'"),
            std::string::npos) << script;
  EXPECT_EQ(script.find(kRunner), std::string::npos) << script;

  ASSERT_EQ(service.webhook("issue_comment", "c-2", testing::comment_created("alice", "/maxcode cancel", 1, 502).dump()).status, 202);
  const json jobs = service.wait_jobs([](const json& j) { return j["jobs"][0]["state"] == "cancelled"; }, 60);
  EXPECT_EQ(jobs["jobs"][0]["state"], "cancelled") << jobs.dump(2);
  for (int i = 0; i < 100; ++i) {
    batch = maxcode_batch_jobs(slurm);
    if (batch.size() == 1 && batch[0].find("|CANCELLED") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(batch.size(), 1u) << joined(batch);
  EXPECT_NE(batch[0].find("|maxcode-job-1-1|CANCELLED"), std::string::npos) << batch[0] << service.process()->log();

  // A runner started for the job after all (a batch job that slipped through) is told
  // it is gone and stops; a pull runner is refused: here Slurm runs the jobs.
  const std::string runner = std::string(MAXCODE_BINARY) + " runner --server " + service.url() +
                             " --token-env RUNNER_TOKEN --wait 1 --work-dir " + (dir.path() / "runner").string();
  testing::BackgroundProcess late(runner + " --job 1 --max-jobs 1", dir.path() / "late.log", {{"RUNNER_TOKEN", kRunner}});
  EXPECT_EQ(late.wait(30), 0) << late.log();
  EXPECT_NE(late.log().find("job 1 is cancelled: nothing to run; stopping"), std::string::npos) << late.log();
  testing::BackgroundProcess pull(runner + " --idle-exit 2", dir.path() / "pull.log", {{"RUNNER_TOKEN", kRunner}});
  EXPECT_EQ(pull.wait(30), 0) << pull.log();
  EXPECT_NE(pull.log().find("claim failed (HTTP 409)"), std::string::npos) << pull.log();
  EXPECT_EQ(service.jobs()["jobs"][0]["state"], "cancelled");
  EXPECT_EQ(service.term(), 0);
}

// sbatch refuses the job (a partition the cluster does not have): the job fails with
// Slurm's own words, attempt by attempt as any failed attempt.
TEST(SlurmBackend, ARefusedSubmissionFailsTheJobSayingWhy) {
  if (const std::string why = testing::SlurmCluster::missing(); !why.empty()) GTEST_SKIP() << why;
  std::string why;
  testing::FakeGithub* github = testing::FakeGithub::get(&why);
  if (!github) GTEST_SKIP() << why;
  github->reset();
  testing::GitServer git_server("*");
  testing::TempDir dir;
  testing::SlurmCluster slurm(dir.path() / "slurm", 1);
  ServiceProcess service(MAXCODE_BINARY, dir.path(),
                         {{"github", setup_repository(*github, git_server, dir.path())},
                          {"queue", {{"max_attempts", 2}, {"backoff_s", 0.5}}},
                          {"job", {{"policy", "replay"}}},
                          {"slurm", {{"partition", "no-such-partition"}}}},
                         kSecret, kAdmin, kRunner);
  service.start();
  ASSERT_EQ(service.webhook("installation", "inst-1", testing::installation_created(77, "acme", {"histo"}).dump()).status, 202);
  ASSERT_EQ(service.webhook("issue_comment", "c-1", testing::comment_created("alice", "/maxcode optimize histogram", 1, 501).dump()).status, 202);
  const json jobs = service.wait_jobs([](const json& j) { return j["jobs"].size() == 1 && j["jobs"][0]["state"] == "failed"; }, 60);
  ASSERT_EQ(jobs["jobs"].size(), 1u) << service.process()->log();
  const json job = jobs["jobs"][0];
  EXPECT_EQ(job["state"], "failed") << job.dump(2);
  EXPECT_EQ(job["attempts"], 2);
  const std::string error = job["error"];
  EXPECT_NE(error.find("Slurm did not take the job"), std::string::npos) << error;
  EXPECT_NE(error.find("--partition=no-such-partition"), std::string::npos) << error;
  EXPECT_NE(error.find("invalid partition"), std::string::npos) << error;
  EXPECT_TRUE(maxcode_batch_jobs(slurm).empty());
  EXPECT_EQ(service.term(), 0);
}

// The batch job starts but its runner cannot (no maxcode where the config says the
// nodes have it): the batch job ends without claiming the job, which counts as a failed
// attempt whose error holds the end of the batch output.
TEST(SlurmBackend, ABatchJobThatEndsWithoutItsJobFailsTheAttemptWithItsOutput) {
  if (const std::string why = testing::SlurmCluster::missing(); !why.empty()) GTEST_SKIP() << why;
  std::string why;
  testing::FakeGithub* github = testing::FakeGithub::get(&why);
  if (!github) GTEST_SKIP() << why;
  github->reset();
  testing::GitServer git_server("*");
  testing::TempDir dir;
  testing::SlurmCluster slurm(dir.path() / "slurm", 1);
  ServiceProcess service(MAXCODE_BINARY, dir.path(),
                         {{"github", setup_repository(*github, git_server, dir.path())},
                          {"queue", {{"max_attempts", 2}, {"backoff_s", 0.5}}},
                          {"job", {{"policy", "replay"}}},
                          {"slurm", {{"maxcode", "/nonexistent/maxcode"}}}},
                         kSecret, kAdmin, kRunner);
  service.start();
  ASSERT_EQ(service.webhook("installation", "inst-1", testing::installation_created(77, "acme", {"histo"}).dump()).status, 202);
  ASSERT_EQ(service.webhook("issue_comment", "c-1", testing::comment_created("alice", "/maxcode optimize histogram", 1, 501).dump()).status, 202);
  const json jobs = service.wait_jobs([](const json& j) { return j["jobs"].size() == 1 && j["jobs"][0]["state"] == "failed"; }, 90);
  ASSERT_EQ(jobs["jobs"].size(), 1u) << service.process()->log();
  const json job = jobs["jobs"][0];
  EXPECT_EQ(job["state"], "failed") << job.dump(2) << service.process()->log() << joined(slurm.all_jobs());
  EXPECT_EQ(job["attempts"], 2);
  const std::string error = job["error"];
  EXPECT_NE(error.find("Slurm job maxcode-job-1-2 ended without running the job"), std::string::npos) << error;
  EXPECT_NE(error.find("/nonexistent/maxcode"), std::string::npos) << error;  // the shell's words, from the output file
  const std::vector<std::string> batch = maxcode_batch_jobs(slurm);
  EXPECT_EQ(batch.size(), 2u) << joined(batch);  // one per attempt, no more
  EXPECT_EQ(service.term(), 0);
}

}  // namespace
}  // namespace maxcode::bot::service
