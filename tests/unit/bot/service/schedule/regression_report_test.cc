// Scheduled jobs into the sweep history and their regressions onto GitHub (the local
// one): three nights of a function whose own time grows eightfold and then eightfold
// again. "issue": one issue, opened on the first regression, updated with a comment on
// the second, never a duplicate, and a retried report changes nothing; "check-run": one
// failing check run on the night's commit, found again on a retry; "none": counted only.
#include "bot/service/schedule/regression_report.h"

#include <gtest/gtest.h>

#include "runner/job/job_record.h"
#include "runner/store/history.h"
#include "runner/util/files.h"
#include "support/github_api.h"
#include "support/service_harness.h"
#include "support/test_support.h"

namespace maxcode::bot::service {
namespace {

using nlohmann::json;

const json kPermissions{{"contents", "read"}, {"issues", "write"}, {"checks", "write"}, {"metadata", "read"}};

struct Fixture {
  testing::TempDir dir;
  double now = 1'795'000'000;  // 2026-11-18 11:06 UTC; each night a day later
  ServiceConfig config;
  std::unique_ptr<JobQueue> queue;
  Metrics metrics;
  ServiceLog log{[](const std::string&) {}};
  std::unique_ptr<GithubAccess> access;
  std::unique_ptr<ServiceContext> context;

  Fixture(testing::FakeGithub& github, const std::string& how) {
    const auto key = testing::make_app_key();
    write_text(dir / "app.pem", key.first);
    github.setup({{"repos", {{{"owner", "acme"}, {"name", "twohot"}}}},
                  {"apps", {{{"id", "4242"}, {"public_key", key.second},
                             {"installations", {{{"id", 77}, {"permissions", kPermissions}}}}}}}});
    config = parse_service_config({{"github", {{"api_url", github.url()}, {"app_id", "4242"},
                                               {"app_key_file", (dir / "app.pem").string()}}},
                                   {"repositories", {{"acme/twohot", {{"regressions", how}}}}}},
                                  "service.json");
    QueueOptions options;
    options.now = [this] { return now; };
    queue = std::make_unique<JobQueue>(dir / "q.sqlite", options);
    access = std::make_unique<GithubAccess>(config, metrics, log);
    context = std::make_unique<ServiceContext>(
        ServiceContext{config, *queue, metrics, *access, log, dir.path(), nullptr, nullptr});
    context->history = dir / "history.sqlite";
  }

  // One scheduled night: a job whose result says sum_squares took `self_ns` of its own.
  std::int64_t night(const std::string& commit, double self_ns) {
    now += 86400;
    JobSpec spec{"acme/twohot", "77", commit, "", "schedule", "tune", 0, "", {}};
    const auto job = queue->enqueue(spec).job;
    const auto claim = queue->claim("r1", {});
    EXPECT_TRUE(claim.has_value());
    const std::filesystem::path out = dir / ("result-" + std::to_string(job.id));
    JobRecord record;
    record.input.repository = record.repository = "/runner/checkout";  // the runner's, not the history's name
    record.input.ref = commit;
    record.commit = commit;
    record.status = JobStatus::kCompleted;
    TargetRecord t;
    t.slug = "src-sum-cpp--sum_squares";
    t.function = "sum_squares";
    t.file = "src/sum.cpp";
    t.status = TargetStatus::kDone;
    t.verdict = TargetVerdict::kNoWinner;
    t.self_ns = self_ns;
    t.samples = static_cast<std::uint64_t>(self_ns / 1e5);
    t.original_s = self_ns / 1e9;
    t.original_rounds = {t.original_s, t.original_s * 1.01, t.original_s * 0.99};
    record.targets.push_back(t);
    std::filesystem::create_directories(out);
    write_job_record(out / "job.json", record);
    EXPECT_TRUE(queue->complete(job.id, claim->lease, JobResult{.dir = out.string(), .exit_code = 0}));
    const auto done = queue->job(job.id);
    EXPECT_EQ(record_sweep(*context, *done, {{"sum_squares", "no-winner", ""}}), 1);
    return job.id;
  }
};

TEST(RegressionReport, TheHistoryGetsEachNightUnderTheRepositorysName) {
  std::string why;
  testing::FakeGithub* github = testing::FakeGithub::get(&why);
  if (!github) GTEST_SKIP() << why;
  github->reset();
  Fixture f(*github, "none");
  const auto first = f.night(std::string(40, 'a'), 2e8);
  const auto second = f.night(std::string(40, 'b'), 2e8);
  const auto rows = HistoryStore(f.context->history).all();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].repository, "acme/twohot");
  EXPECT_EQ(rows[0].night, sweep_night(*f.queue->job(first)));
  EXPECT_EQ(rows[0].night, "2026-11-19 11:06");
  EXPECT_EQ(rows[1].night, "2026-11-20 11:06");
  EXPECT_EQ(rows[1].commit, std::string(40, 'b'));
  EXPECT_EQ(rows[1].pr_state, "no-winner");
  EXPECT_TRUE(regressions_of(*f.context, *f.queue->job(second)).empty()) << "the same time is no regression";
  EXPECT_EQ(report_regressions(*f.context, second), 0);
  // Eight times the work: a regression, reported nowhere but counted.
  const auto third = f.night(std::string(40, 'c'), 16e8);
  EXPECT_EQ(report_regressions(*f.context, third), 1);
  EXPECT_NE(f.metrics.text().find("maxcode_regressions_reported_total{repository=\"acme/twohot\",how=\"none\"} 1"),
            std::string::npos) << f.metrics.text();
  EXPECT_TRUE(github->state()["repos"]["acme/twohot"]["issues"].empty());
  github->check_clean();
}

TEST(RegressionReport, OneIssuePerFunctionUpdatedOnTheNextRegressionNeverDuplicated) {
  std::string why;
  testing::FakeGithub* github = testing::FakeGithub::get(&why);
  if (!github) GTEST_SKIP() << why;
  github->reset();
  Fixture f(*github, "issue");
  f.night(std::string(40, 'a'), 2e8);
  const auto slower = f.night(std::string(40, 'b'), 16e8);
  EXPECT_EQ(report_regressions(*f.context, slower), 1);
  EXPECT_EQ(report_regressions(*f.context, slower), 1);  // a retry: nothing new on GitHub
  json state = github->state()["repos"]["acme/twohot"];
  ASSERT_EQ(state["issues"].size(), 1u) << state.dump(2);
  const json issue = state["issues"][0];
  EXPECT_EQ(issue["title"], "Performance regression: `sum_squares` (src/sum.cpp)");
  EXPECT_EQ(issue["labels"], json::array({"maxcode-regression"}));
  const std::string body = issue["body"];
  EXPECT_NE(body.find("<!-- maxcode-regression: src/sum.cpp:sum_squares -->"), std::string::npos) << body;
  EXPECT_NE(body.find("8.00x"), std::string::npos) << body;
  EXPECT_NE(body.find("after: 2026-11-20 11:06 at bbbbbbb"), std::string::npos) << body;
  EXPECT_TRUE(state["comments"].empty());

  const auto slower_again = f.night(std::string(40, 'c'), 128e8);
  EXPECT_EQ(report_regressions(*f.context, slower_again), 1);
  EXPECT_EQ(report_regressions(*f.context, slower_again), 1);
  state = github->state()["repos"]["acme/twohot"];
  ASSERT_EQ(state["issues"].size(), 1u) << "updated, not a second issue: " << state.dump(2);
  EXPECT_NE(state["issues"][0]["body"].get<std::string>().find("after: 2026-11-21 11:06 at ccccccc"), std::string::npos);
  ASSERT_EQ(state["comments"].size(), 1u) << state.dump(2);
  EXPECT_EQ(state["comments"][0]["issue"], issue["number"]);
  EXPECT_NE(state["comments"][0]["body"].get<std::string>().find("Again on 2026-11-21 11:06"), std::string::npos);
  EXPECT_NE(f.metrics.text().find("maxcode_regressions_reported_total{repository=\"acme/twohot\",how=\"issue\"} 4"),
            std::string::npos) << f.metrics.text();
  github->check_clean();
}

TEST(RegressionReport, ACheckRunOnTheNightsCommitOnce) {
  std::string why;
  testing::FakeGithub* github = testing::FakeGithub::get(&why);
  if (!github) GTEST_SKIP() << why;
  github->reset();
  Fixture f(*github, "check-run");
  f.night(std::string(40, 'a'), 2e8);
  const auto slower = f.night(std::string(40, 'b'), 16e8);
  EXPECT_EQ(report_regressions(*f.context, slower), 1);
  EXPECT_EQ(report_regressions(*f.context, slower), 1);
  const json state = github->state()["repos"]["acme/twohot"];
  ASSERT_EQ(state["check_runs"].size(), 1u) << state.dump(2);
  EXPECT_EQ(state["check_runs"][0]["name"], "maxcode regressions");
  EXPECT_EQ(state["check_runs"][0]["head_sha"], std::string(40, 'b'));
  EXPECT_EQ(state["check_runs"][0]["conclusion"], "failure");
  EXPECT_NE(state["check_runs"][0]["summary"].get<std::string>().find("`sum_squares`"), std::string::npos);
  EXPECT_TRUE(state["issues"].empty());
  github->check_clean();
}

}  // namespace
}  // namespace maxcode::bot::service
