// The scheduler with a clock the test moves and the local GitHub: a new schedule does
// not fire for the past, a due one queues one job per repository at the time its cron
// names in its time zone, several missed times make one catch-up run, and a commit
// already swept is not swept again.
#include "bot/service/schedule/scheduler.h"

#include <gtest/gtest.h>

#include <ctime>

#include "runner/util/files.h"
#include "support/github_api.h"
#include "support/service_harness.h"
#include "support/test_support.h"

namespace maxcode::bot::service {
namespace {

using nlohmann::json;

double utc(int y, int mo, int d, int h, int mi) {
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  return static_cast<double>(timegm(&tm));
}

TEST(Scheduler, NightlyInItsTimeZoneWithOneCatchUp) {
  std::string why;
  testing::FakeGithub* github = testing::FakeGithub::get(&why);
  if (!github) GTEST_SKIP() << why;
  github->reset();
  testing::TempDir dir;
  const auto key = testing::make_app_key();
  write_text(dir / "app.pem", key.first);
  const std::string sha = "0123456789abcdef0123456789abcdef01234567";
  github->setup({{"repos", {{{"owner", "acme"}, {"name", "histo"}, {"refs", {{"main", sha}}}}}},
                 {"apps", {{{"id", "4242"}, {"public_key", key.second},
                            {"installations", {{{"id", 77}, {"permissions", {{"contents", "read"}, {"metadata", "read"}}}}}}}}}});
  ServiceConfig config = parse_service_config(
      {{"github", {{"api_url", github->url()}, {"app_id", "4242"}, {"app_key_file", (dir / "app.pem").string()}}},
       {"schedules", {{{"name", "nightly"}, {"cron", "0 3 * * *"}, {"time_zone", "Europe/Berlin"}, {"repository", "acme/histo"}}}}},
      "service.json");
  double now = utc(2026, 11, 23, 12, 0);
  QueueOptions options;
  options.now = [&now] { return now; };
  JobQueue queue(dir / "q.sqlite", options);
  queue.installations.set("77", "acme", "active", json::array({"acme/histo"}));
  Metrics metrics;
  ServiceLog log([](const std::string&) {});
  GithubAccess access(config, metrics, log);
  ServiceContext context{config, queue, metrics, access, log, dir.path(), [] {}, [](std::int64_t) {}};
  Scheduler scheduler(context);

  EXPECT_EQ(scheduler.tick(), 0);  // first sight: no run for the past
  now = utc(2026, 11, 24, 1, 59);  // 02:59 in Berlin (CET)
  EXPECT_EQ(scheduler.tick(), 0);
  now = utc(2026, 11, 24, 2, 0);   // 03:00 in Berlin
  EXPECT_EQ(scheduler.tick(), 1);
  auto jobs = queue.jobs();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].trigger, "schedule");
  EXPECT_EQ(jobs[0].commit, sha);
  EXPECT_EQ(jobs[0].installation_id, "77");
  EXPECT_EQ(scheduler.tick(), 0);  // not due again until tomorrow
  // Down for three nights: one catch-up run, which finds the commit already swept.
  now = utc(2026, 11, 27, 5, 0);
  EXPECT_EQ(scheduler.tick(), 0);
  EXPECT_EQ(metrics.value("maxcode_schedule_runs_total", {{"schedule", "nightly"}}), 2);
  EXPECT_EQ(queue.jobs().size(), 1u);
  EXPECT_EQ(scheduler.tick(), 0);
  EXPECT_EQ(metrics.value("maxcode_schedule_runs_total", {{"schedule", "nightly"}}), 2);
  github->check_clean();
}

TEST(Scheduler, BadSchedulesAreConfigErrors) {
  testing::TempDir dir;
  ServiceConfig config = parse_service_config(
      {{"schedules", {{{"cron", "0 3 * *"}, {"repository", "a/b"}}}}}, "service.json");
  QueueOptions options;
  JobQueue queue(dir / "q.sqlite", options);
  Metrics metrics;
  ServiceLog log([](const std::string&) {});
  GithubAccess access(config, metrics, log);
  ServiceContext context{config, queue, metrics, access, log, dir.path(), nullptr, nullptr};
  try {
    Scheduler scheduler(context);
    ADD_FAILURE() << "accepted";
  } catch (const ServiceConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("schedules[0]: cron '0 3 * *': expected 5 fields"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace maxcode::bot::service
