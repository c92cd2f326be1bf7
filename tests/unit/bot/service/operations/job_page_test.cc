// A job's page as a repository's developer opens it from GitHub's "Details": the real
// `maxcode serve` on a store that holds a delivered job and a failed one. The signed
// link opens without the admin token and shows the job (cause, PR, speedup, durations,
// reports) and none of the service's paths or secrets; a changed, foreign or expired
// link is refused; the admin dashboard links each job to its page and hides runners
// that left.
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/stat.h>

#include <signal.h>

#include <chrono>
#include <regex>
#include <thread>

#include "bot/service/operations/job_page.h"
#include "bot/service/queue/job_queue.h"
#include "bot/service/operations/link_signature.h"
#include "bot/service/service_config.h"
#include "runner/util/files.h"
#include "support/fixture_repo.h"
#include "support/git_server.h"
#include "support/github_api.h"
#include "support/service_harness.h"
#include "support/test_support.h"

namespace maxcode::bot::service {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kSecret = "webhook-secret-for-job-pages";
constexpr const char* kAdmin = "admin-token-for-job-pages";
constexpr const char* kRunner = "runner-token-for-job-pages";
constexpr const char* kCommit = "1dc78550e8c3ec509e4d5286f3944355958e94c1";
constexpr const char* kPr = "https://github.com/acme/histo/pull/12";

double wall_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

struct Reply {
  int status = 0;
  std::string body;
  httplib::Headers headers;
};

std::string header(const Reply& r, const char* name) {
  const auto it = r.headers.find(name);
  return it == r.headers.end() ? "" : it->second;
}

Reply get(int port, const std::string& path) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(10, 0);
  auto r = client.Get(path.c_str());  // no token, no cookie: a developer from GitHub
  if (!r) return {0, httplib::to_string(r.error()), {}};
  return {r->status, r->body, r->headers};
}

// The href of job `id` on the dashboard, unescaped.
std::string dashboard_link(const std::string& page, std::int64_t id) {
  std::smatch m;
  const std::regex href("href='(/jobs/" + std::to_string(id) + "\\?exp=[0-9]+&amp;sig=[0-9a-f]{64})'");
  if (!std::regex_search(page, m, href)) return "";
  std::string link = m[1];
  return link.replace(link.find("&amp;"), 5, "&");
}

// A store with job 1 delivered (a PR, a speedup, a report) and job 2 failed (a cause
// that names the service's data dir and holds the admin token), and two runners, one
// heard from 5 s ago and one two hours ago.
void fill_store(const fs::path& db, const fs::path& data_dir) {
  double t = wall_now() - 600;
  JobQueue queue(db, QueueOptions{120, 3, 30, [&t] { return t; }});
  JobSpec spec{"acme/histo", "77", kCommit, "histogram", "comment", "tune", 1, "alice", {}};

  const auto one = queue.enqueue(spec).job;
  t += 20;
  auto claim = queue.claim("live-runner", {});
  const fs::path dir1 = data_dir / "jobs" / "1" / "attempt-1";
  write_text(dir1 / "targets" / "histogram" / "report.html",
             "<!doctype html><h1>histogram report</h1><p>stored in " + dir1.string() +
                 "</p><script>document.title='ran'</script>\n");
  write_text(dir1 / "targets" / "histogram" / "patch.diff", "--- a/src/histogram.cpp\n+++ b/src/histogram.cpp\n");
  write_text(dir1 / "targets" / "histogram" / "result.json", "{}");
  json record{{"status", "finished"},
              {"targets",
               {{{"slug", "histogram"},
                 {"function", "histogram"},
                 {"file", "src/histogram.cpp"},
                 {"status", "done"},
                 {"verdict", "winner"},
                 {"speedup", {{"median", 1.42}, {"low", 1.38}, {"high", 1.47}, {"rounds", 30}}},
                 {"original_s", 0.0123}}}}};
  JobResult result{
      .dir = dir1.string(), .exit_code = 0, .log = "searched 32 candidates\n", .targets = {"histogram"}, .job = record};
  ASSERT_TRUE(queue.complete(one.id, claim->lease, result));
  t += 95;
  result.speedups = {{"histogram", 1.42}};
  result.deliveries = {{"histogram", "created", kPr}};
  queue.finish(one.id, JobState::kDone, "created", "- `histogram`: 1.42x; opened " + std::string(kPr), kPr, result);

  spec.target = "no_such_function";
  const auto two = queue.enqueue(spec).job;
  t += 5;
  claim = queue.claim("live-runner", {});
  const std::string cause = "no function no_such_function in the repository (JOB_DIR/src); the clone was kept in " +
                            (data_dir / "tmp" / "clone-2").string() + "; tried with " + kAdmin + ": the cause is whole, " +
                            std::string(3000, 'x') + " END-OF-CAUSE";
  const JobResult failed{.dir = (data_dir / "jobs" / "2" / "attempt-1").string(),
                         .exit_code = 1,
                         .log = "maxcode run: error: no function no_such_function\n",
                         .job = {{"status", "failed"}, {"error", cause}}};
  ASSERT_TRUE(queue.complete(two.id, claim->lease, failed));
  t += 3;
  queue.finish(two.id, JobState::kFailed, "run-failed", "`maxcode run` failed (exit code 1): " + cause, "", failed);

  t = wall_now() - 7200;
  queue.runners.seen("old-runner", {"gpu"}, 0);
  t = wall_now() - 5;
  queue.runners.seen("live-runner", {"cpu"}, 0);
}

class JobPage : public ::testing::Test {
 protected:
  void SetUp() override {
    fill_store(dir / "service.sqlite", data_dir);
    service = std::make_unique<testing::ServiceProcess>(MAXCODE_BINARY, dir.path(), json{{"public_url", "https://maxcode.example.com"}},
                                                         kSecret, kAdmin, kRunner);
    service->start();
    dashboard = service->get("/", kAdmin).body;
    link1 = dashboard_link(dashboard, 1);
    link2 = dashboard_link(dashboard, 2);
    ASSERT_FALSE(link1.empty()) << dashboard;
    ASSERT_FALSE(link2.empty()) << dashboard;
  }
  void TearDown() override { EXPECT_EQ(service->term(), 0); }

  // The service's own key, as an operator (or a forger who stole it) would use it.
  LinkSigner key() const { return LinkSigner::from_key_file(data_dir / "job-links.key", 30 * 86400.0); }
  std::string query_of(const std::string& link) const { return link.substr(link.find('?')); }

  testing::TempDir dir;
  fs::path data_dir = dir.path() / "service.sqlite.d";
  std::unique_ptr<testing::ServiceProcess> service;
  std::string dashboard, link1, link2;
};

TEST_F(JobPage, ASignedLinkOpensTheDeliveredJobWithoutTheAdminToken) {
  const Reply page = get(service->port(), link1);
  ASSERT_EQ(page.status, 200) << page.body;
  for (const std::string& shown : {std::string("acme/histo"), std::string(kCommit), std::string("histogram"),
                                   std::string("<a href='") + kPr + "'>", std::string("1.42x (95% interval 1.38x to 1.47x)"),
                                   std::string("0.0123 s"), std::string("20 s"), std::string("95 s running, 115 s in all"),
                                   std::string("/jobs/1/targets/histogram/report.html?exp="),
                                   std::string("/jobs/1/targets/histogram/patch.diff?exp=")})
    EXPECT_NE(page.body.find(shown), std::string::npos) << shown << "\n" << page.body;
  EXPECT_EQ(page.body.find(kAdmin), std::string::npos);
  EXPECT_EQ(page.body.find(data_dir.string()), std::string::npos);
  EXPECT_EQ(page.body.find("result.json"), std::string::npos) << "only the files meant for people are linked";
  const std::string policy = header(page, "Content-Security-Policy");
  EXPECT_NE(policy.find("default-src 'none'"), std::string::npos) << policy;
  EXPECT_EQ(header(page, "Referrer-Policy"), std::string("no-referrer"));
  EXPECT_EQ(header(page, "Cache-Control"), std::string("no-store"));

  // The report, with the service's paths replaced, under a policy that runs no script.
  const Reply report = get(service->port(), "/jobs/1/targets/histogram/report.html" + query_of(link1));
  ASSERT_EQ(report.status, 200) << report.body;
  EXPECT_NE(report.body.find("histogram report"), std::string::npos);
  EXPECT_NE(report.body.find("stored in DATA_DIR/jobs/1/attempt-1"), std::string::npos) << report.body;
  EXPECT_EQ(report.body.find(data_dir.string()), std::string::npos);
  EXPECT_NE(header(report, "Content-Security-Policy").find("default-src 'none'"),
            std::string::npos);
  const Reply patch = get(service->port(), "/jobs/1/targets/histogram/patch.diff" + query_of(link1));
  EXPECT_EQ(patch.status, 200);
  EXPECT_NE(patch.body.find("+++ b/src/histogram.cpp"), std::string::npos);
  EXPECT_NE(header(patch, "Content-Type").find("text/plain"), std::string::npos);
  // Files not meant for people, and names that leave the target's folder.
  EXPECT_EQ(get(service->port(), "/jobs/1/targets/histogram/result.json" + query_of(link1)).status, 404);
  for (const std::string& slug : {"..", ".hidden", "%2e%2e", "..%2f..%2f..", "nope"})
    EXPECT_EQ(get(service->port(), "/jobs/1/targets/" + slug + "/report.html" + query_of(link1)).status, 404) << slug;
}

TEST_F(JobPage, AFailedJobShowsItsCauseWholeWithoutPathsOrSecrets) {
  const Reply page = get(service->port(), link2);
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_NE(page.body.find("Why it failed"), std::string::npos);
  EXPECT_NE(page.body.find("no function no_such_function in the repository (JOB_DIR/src)"), std::string::npos) << page.body;
  EXPECT_NE(page.body.find(std::string(3000, 'x') + " END-OF-CAUSE"), std::string::npos) << "the cause, whole";
  EXPECT_NE(page.body.find("kept in DATA_DIR/tmp/clone-2"), std::string::npos) << page.body;
  EXPECT_NE(page.body.find("tried with [redacted]"), std::string::npos);
  EXPECT_NE(page.body.find("maxcode run: error: no function no_such_function"), std::string::npos) << "the log's end";
  EXPECT_EQ(page.body.find(kAdmin), std::string::npos);
  EXPECT_EQ(page.body.find(data_dir.string()), std::string::npos);
  EXPECT_EQ(page.body.find(dir.path().string()), std::string::npos);
}

TEST_F(JobPage, ChangedForeignExpiredAndMissingSignaturesAreRefused) {
  ASSERT_EQ(get(service->port(), link1).status, 200);
  std::string tampered = link1;
  char& last = tampered.back();
  last = last == '0' ? '1' : '0';
  const Reply bad = get(service->port(), tampered);
  EXPECT_EQ(bad.status, 403);
  EXPECT_NE(bad.body.find("not valid"), std::string::npos) << bad.body;
  EXPECT_EQ(get(service->port(), "/jobs/2" + query_of(link1)).status, 403) << "job 1's link for job 2";
  EXPECT_EQ(get(service->port(), "/jobs/2/targets/histogram/report.html" + query_of(link1)).status, 403);
  EXPECT_EQ(get(service->port(), "/jobs/1").status, 403);
  EXPECT_EQ(get(service->port(), "/jobs/1?token=" + std::string(kAdmin)).status, 403) << "the admin token is no link";

  const LinkSigner links = key();
  const auto past = static_cast<std::int64_t>(wall_now()) - 10;
  const Reply expired = get(service->port(), "/jobs/1?exp=" + std::to_string(past) + "&sig=" + links.sign(1, past));
  EXPECT_EQ(expired.status, 403);
  EXPECT_NE(expired.body.find("expired"), std::string::npos) << expired.body;
  const auto far = static_cast<std::int64_t>(wall_now()) + 400 * 86400;
  EXPECT_EQ(get(service->port(), "/jobs/1?exp=" + std::to_string(far) + "&sig=" + links.sign(1, far)).status, 403)
      << "longer than details_link_ttl_s";
  // A good signature for a job the store does not have.
  EXPECT_EQ(get(service->port(), job_page_link(links, 99, wall_now())).status, 404);
  EXPECT_EQ(get(service->port(), job_page_link(links, 1, wall_now())).status, 200);

  struct stat st {};
  ASSERT_EQ(::stat((data_dir / "job-links.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(JobPage, TheDashboardLinksJobsShowsSpeedupsAndDurationsRefreshesAndDropsRunnersThatLeft) {
  EXPECT_NE(dashboard.find("<meta http-equiv='refresh' content='30'>"), std::string::npos);
  EXPECT_NE(dashboard.find("1.42x histogram"), std::string::npos) << dashboard;
  EXPECT_NE(dashboard.find("<td>95 s</td>"), std::string::npos) << dashboard;
  EXPECT_NE(dashboard.find("live-runner"), std::string::npos);
  EXPECT_EQ(dashboard.find("old-runner"), std::string::npos) << dashboard;
  EXPECT_NE(dashboard.find("1 runner not heard from for more than 120 s"), std::string::npos);
  EXPECT_EQ(get(service->port(), "/").status, 403) << "the dashboard still needs the admin token";
}

// The whole way: a command on GitHub becomes a job that a runner runs; the check run on
// the local GitHub (its requests checked against GitHub's OpenAPI description) carries
// a Details link that opens the job's page for someone with no token.
TEST(JobPageDetails, TheCheckRunsDetailsOpensTheJobsPageWithoutTheAdminToken) {
  std::string why;
  testing::FakeGithub* github = testing::FakeGithub::get(&why);
  if (!github) GTEST_SKIP() << why;
  github->reset();
  testing::GitServer git_server("*");
  testing::TempDir dir;
  const fs::path source = dir.path() / "source";
  testing::copy_example_with_short_timing("cpu-histogram", source);
  git_server.create_repo("acme/histo.git", source);
  const auto app_key = testing::make_app_key();
  write_text(dir.path() / "app.pem", app_key.first);
  const json permissions{{"contents", "write"}, {"pull_requests", "write"}, {"issues", "write"}, {"checks", "write"}, {"metadata", "read"}};
  github->setup({{"repos", {{{"owner", "acme"}, {"name", "histo"}, {"git_dir", (git_server.root() / "acme/histo.git").string()},
                             {"collaborators", {{"alice", "write"}}}, {"issues", {{{"number", 1}}}}}}},
                 {"apps", {{{"id", "4242"}, {"public_key", app_key.second},
                            {"installations", {{{"id", 77}, {"permissions", permissions}}}}}}}});
  std::string git_url = git_server.url("acme/histo.git");
  git_url = git_url.substr(0, git_url.find("acme/histo.git")) + "{owner}/{name}.git";
  testing::ServiceProcess service(MAXCODE_BINARY, dir.path(),
                                  {{"public_url", "https://maxcode.example.com/"},
                                   {"github", {{"api_url", github->url()}, {"app_id", "4242"},
                                               {"app_key_file", (dir.path() / "app.pem").string()}, {"git_url", git_url}}},
                                   {"queue", {{"lease_s", 20}, {"backoff_s", 0.2}, {"max_attempts", 1}, {"long_poll_s", 5}}}},
                                  kSecret, kAdmin, kRunner);
  service.start();
  const json installation = testing::installation_created(77, "acme", {"histo"});
  ASSERT_EQ(service.webhook("installation", "inst-1", installation.dump()).status, 202);

  // The job fails the way a typo does; its cause names a path of the runner's, replaced.
  const fs::path failing = dir.path() / "failing-job.sh";
  write_text(failing, "#!/bin/sh\nmkdir -p \"$4\"\n"
                      "printf '{\"status\": \"failed\", \"error\": \"no function no_such_function in %s\"}' \"$4\" > \"$4/job.json\"\n"
                      "echo \"maxcode run: error: no function no_such_function in $4\" >&2; exit 1\n");
  fs::permissions(failing, fs::perms::owner_all);
  testing::BackgroundProcess runner(
      std::string(MAXCODE_BINARY) + " runner --server " + service.url() + " --token-env RUNNER_TOKEN --heartbeat 0.5 --wait 5" +
          " --name details-runner --work-dir " + (dir.path() / "runner").string() + " --run-command " + failing.string(),
      dir.path() / "runner.log", {{"RUNNER_TOKEN", kRunner}});
  json comment = testing::webhook_examples("issue_comment")[0];
  comment["action"] = "created";
  comment["issue"]["number"] = 1;
  comment["issue"].erase("pull_request");
  comment["comment"]["body"] = "/maxcode optimize no_such_function";
  comment["comment"]["user"]["login"] = "alice";
  comment["comment"]["user"]["type"] = "User";
  comment["repository"]["full_name"] = "acme/histo";
  comment["repository"]["name"] = "histo";
  comment["repository"]["owner"]["login"] = "acme";
  comment["installation"] = {{"id", 77}};
  comment["sender"]["login"] = "alice";
  ASSERT_EQ(service.webhook("issue_comment", "cmd-1", comment.dump()).status, 202);

  json run;
  for (int i = 0; i < 300; ++i) {
    const json runs = github->state()["repos"]["acme/histo"]["check_runs"];
    if (runs.is_array() && runs.size() == 1 && runs[0]["status"] == "completed") {
      run = runs[0];
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_TRUE(run.is_object()) << github->state()["repos"]["acme/histo"].dump(2) << "\n" << runner.log();
  const std::string details = run.value("details_url", "");
  const std::string prefix = "https://maxcode.example.com/jobs/1?exp=";
  ASSERT_EQ(details.rfind(prefix, 0), 0u) << run.dump(2);
  const Reply page = get(service.port(), details.substr(std::string("https://maxcode.example.com").size()));
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_NE(page.body.find("Why it failed"), std::string::npos);
  EXPECT_NE(page.body.find("no function no_such_function in JOB_DIR"), std::string::npos) << page.body;
  EXPECT_EQ(page.body.find(kAdmin), std::string::npos);
  EXPECT_EQ(page.body.find(dir.path().string()), std::string::npos) << page.body;
  runner.stop(SIGTERM);
  EXPECT_EQ(service.term(), 0);
  github->check_clean();
}

TEST(JobPageLink, DetailsUrlIsAbsoluteAndSigned) {
  const LinkSigner links(std::string(64, 'k'), 3600);
  const std::string url = job_details_url("https://maxcode.example.com/", links, 5, 1'800'000'000);
  EXPECT_EQ(url, "https://maxcode.example.com/jobs/5?exp=1800003600&sig=" + links.sign(5, 1'800'003'600));
  EXPECT_EQ(job_details_url("", links, 5, 1'800'000'000), "");
}

TEST(JobPageLink, TheLifetimeIsConfiguredAndChecked) {
  EXPECT_EQ(parse_service_config(json::object(), "service.json").details_link_ttl_s, 30 * 86400.0);
  EXPECT_EQ(parse_service_config(json{{"details_link_ttl_s", 3600}}, "service.json").details_link_ttl_s, 3600.0);
  for (const json& bad : {json(10), json(3600.5), json("1h"), json(-1)})
    try {
      parse_service_config(json{{"details_link_ttl_s", bad}}, "service.json");
      ADD_FAILURE() << bad.dump() << " was accepted";
    } catch (const ServiceConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("service.json: details_link_ttl_s"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace maxcode::bot::service
