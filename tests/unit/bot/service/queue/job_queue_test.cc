// The durable queue on each engine of the store, a real SQLite file and a real
// PostgreSQL (tests/support/postgres_server.h), with a clock the test moves: states,
// leases that expire, retries with backoff, idempotency keys, cancel, labels, one
// running job per repository, WAL mode and surviving a reopen (a restart). Then two
// replicas (two JobQueue objects, two connections to one store) racing in threads.
#include "bot/service/queue/job_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "support/postgres_server.h"
#include "support/test_support.h"

namespace maxcode::bot::service {
namespace {

struct Clock {
  double t = 1'000'000;
};

QueueOptions options(Clock& clock) {
  QueueOptions o;
  o.lease_s = 60;
  o.max_attempts = 3;
  o.backoff_s = 30;
  o.now = [&clock] { return clock.t; };
  return o;
}

JobSpec spec(const std::string& repo = "acme/histo", const std::string& commit = "c1", const std::string& target = "histogram") {
  JobSpec s;
  s.repo = repo;
  s.installation_id = "77";
  s.commit = commit;
  s.target = target;
  s.trigger = "comment";
  s.policy = "replay";
  s.issue_number = 3;
  return s;
}

enum class Engine { kSqlite, kPostgres };

// Each test opens its store as often as it likes (a reopen is a restart): the same file,
// or the same PostgreSQL database, made fresh for the test.
class JobQueueStore : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    if (GetParam() == Engine::kPostgres) {
      const std::string why = testing::PostgresServer::missing();
      if (!why.empty()) GTEST_SKIP() << "PostgreSQL store not tested: " << why;
      store_ = testing::PostgresServer::shared().create_database();
    } else {
      store_ = (dir_ / "q.sqlite").string();
    }
  }
  std::unique_ptr<SqlDatabase> open() { return open_sql_database(store_); }
  bool sqlite() const { return GetParam() == Engine::kSqlite; }

  testing::TempDir dir_;
  std::string store_;
};

INSTANTIATE_TEST_SUITE_P(Engines, JobQueueStore, ::testing::Values(Engine::kSqlite, Engine::kPostgres),
                         [](const auto& info) { return info.param == Engine::kSqlite ? "SQLite" : "PostgreSQL"; });

TEST_P(JobQueueStore, RunsAJobThroughItsStates) {
  Clock clock;
  JobQueue q(open(), options(clock));
  EXPECT_EQ(q.journal_mode(), sqlite() ? "wal" : "");
  const auto e = q.enqueue(spec());
  ASSERT_TRUE(e.created);
  EXPECT_EQ(e.job.state, JobState::kQueued);
  EXPECT_EQ(q.queue_position(e.job.id), 1);
  auto claim = q.claim("r1", {});
  ASSERT_TRUE(claim);
  EXPECT_EQ(claim->job.id, e.job.id);
  EXPECT_EQ(claim->job.state, JobState::kRunning);
  EXPECT_EQ(claim->job.attempts, 1);
  EXPECT_EQ(q.queue_position(e.job.id), 0);
  EXPECT_FALSE(q.claim("r2", {}));  // nothing else queued
  EXPECT_EQ(q.heartbeat(e.job.id, claim->lease), JobQueue::Lease::kHeld);
  EXPECT_EQ(q.heartbeat(e.job.id, "not-the-lease"), JobQueue::Lease::kLost);
  JobResult result;
  result.dir = "/data/jobs/1/attempt-1";
  result.exit_code = 0;
  result.targets = {"src-sum-cpp--sum_squares"};
  EXPECT_FALSE(q.complete(e.job.id, "not-the-lease", result));
  ASSERT_TRUE(q.complete(e.job.id, claim->lease, result));
  EXPECT_EQ(q.job(e.job.id)->state, JobState::kDelivering);
  result.exit_code = 2;
  EXPECT_FALSE(q.complete(e.job.id, claim->lease, result));  // a second upload of the same result
  q.finish(e.job.id, JobState::kDone, "created", "a PR", "http://pr/1");
  const auto done = q.job(e.job.id);
  EXPECT_EQ(done->state, JobState::kDone);
  EXPECT_EQ(done->pr_url, "http://pr/1");
  EXPECT_EQ(done->result.exit_code, 0);
  EXPECT_EQ(done->result.targets, std::vector<std::string>{"src-sum-cpp--sum_squares"});
  EXPECT_EQ(q.counts_by_state()["done"], 1);
}

TEST_P(JobQueueStore, TheSameKeyNeverMakesASecondJob) {
  Clock clock;
  JobQueue q(open(), options(clock));
  const auto first = q.enqueue(spec());
  const auto again = q.enqueue(spec());
  EXPECT_FALSE(again.created);
  EXPECT_EQ(again.job.id, first.job.id);
  // Another commit, target or trigger is another job.
  EXPECT_TRUE(q.enqueue(spec("acme/histo", "c2")).created);
  EXPECT_TRUE(q.enqueue(spec("acme/histo", "c1", "other")).created);
  JobSpec push = spec();
  push.trigger = "push";
  EXPECT_TRUE(q.enqueue(push).created);
  EXPECT_EQ(q.jobs().size(), 4u);
  // A cancelled job is queued again only when a person asks again (reopen).
  ASSERT_TRUE(q.cancel(first.job.id));
  EXPECT_EQ(q.job(first.job.id)->state, JobState::kCancelled);
  EXPECT_FALSE(q.enqueue(spec()).reopened);
  const auto reopened = q.enqueue(spec(), true);
  EXPECT_TRUE(reopened.reopened);
  EXPECT_EQ(reopened.job.id, first.job.id);
  EXPECT_EQ(reopened.job.state, JobState::kQueued);
  EXPECT_EQ(q.jobs().size(), 4u);
}

TEST_P(JobQueueStore, AnExpiredLeaseReturnsTheJobWithBackoffThenFails) {
  Clock clock;
  JobQueue q(open(), options(clock));
  const auto id = q.enqueue(spec()).job.id;
  auto c1 = q.claim("r1", {});
  ASSERT_TRUE(c1);
  clock.t += 59;
  EXPECT_TRUE(q.expire_leases().empty());
  EXPECT_EQ(q.heartbeat(id, c1->lease), JobQueue::Lease::kHeld);  // extends to t + 60
  clock.t += 61;
  EXPECT_EQ(q.expire_leases(), std::vector<std::int64_t>{id});
  auto j = q.job(id);
  EXPECT_EQ(j->state, JobState::kQueued);
  EXPECT_NE(j->error.find("lease expired"), std::string::npos);
  // The dead runner's late result is refused.
  EXPECT_FALSE(q.complete(id, c1->lease, {}));
  EXPECT_EQ(q.heartbeat(id, c1->lease), JobQueue::Lease::kLost);
  // Backoff: 30 s after the first attempt.
  EXPECT_FALSE(q.claim("r2", {}));
  clock.t += 31;
  auto c2 = q.claim("r2", {});
  ASSERT_TRUE(c2);
  EXPECT_EQ(c2->job.attempts, 2);
  EXPECT_NE(c2->lease, c1->lease);
  // The second attempt fails on the runner: 60 s backoff now.
  ASSERT_TRUE(q.fail_attempt(id, c2->lease, "clone failed"));
  clock.t += 59;
  EXPECT_FALSE(q.claim("r2", {}));
  clock.t += 2;
  auto c3 = q.claim("r2", {});
  ASSERT_TRUE(c3);
  ASSERT_TRUE(q.fail_attempt(id, c3->lease, "clone failed again"));
  j = q.job(id);
  EXPECT_EQ(j->state, JobState::kFailed);  // three attempts spent
  EXPECT_NE(j->summary.find("gave up after 3 attempt(s): clone failed again"), std::string::npos) << j->summary;
}

TEST_P(JobQueueStore, LabelsAndOneRunningJobPerRepository) {
  Clock clock;
  JobQueue q(open(), options(clock));
  JobSpec gpu = spec("acme/kernels", "k1", "transpose");
  gpu.labels = {"gpu", "h100"};
  const auto gpu_id = q.enqueue(gpu).job.id;
  const auto a = q.enqueue(spec("acme/histo", "c1", "f")).job.id;
  const auto b = q.enqueue(spec("acme/histo", "c1", "g")).job.id;
  // A CPU runner cannot take the GPU job; it takes the oldest that fits.
  auto c = q.claim("cpu", {"cpu"});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->job.id, a);
  // acme/histo is busy: its second job waits although queued.
  EXPECT_FALSE(q.claim("cpu2", {"cpu"}));
  auto g = q.claim("gpu", {"gpu", "h100", "cuda12"});
  ASSERT_TRUE(g);
  EXPECT_EQ(g->job.id, gpu_id);
  ASSERT_TRUE(q.complete(a, c->lease, {}));
  auto next = q.claim("cpu2", {"cpu"});
  ASSERT_TRUE(next);
  EXPECT_EQ(next->job.id, b);
}

// A runner started for one job (Slurm's batch job) claims that job or nothing, whatever
// its labels; the repository rule and the backoff still hold.
TEST_P(JobQueueStore, AClaimForOneJobTakesThatJobOnly) {
  Clock clock;
  JobQueue q(open(), options(clock));
  const auto a = q.enqueue(spec("acme/histo", "c1", "f")).job.id;
  JobSpec gpu = spec("acme/histo", "c1", "g");
  gpu.labels = {"gpu"};
  const auto b = q.enqueue(gpu).job.id;
  auto c = q.claim("slurm-b", {}, b);  // b, not the older a; its labels are not asked for
  ASSERT_TRUE(c);
  EXPECT_EQ(c->job.id, b);
  EXPECT_FALSE(q.claim("slurm-a", {}, a));  // acme/histo is busy
  ASSERT_TRUE(q.complete(b, c->lease, {}));
  EXPECT_FALSE(q.claim("slurm-b2", {}, b));  // not queued any more
  c = q.claim("slurm-a", {}, a);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->job.id, a);
}

// An attempt that never started (sbatch refused it) counts: backoff, then failed.
TEST_P(JobQueueStore, AnUnstartedAttemptCountsAndFailsTheJobAtTheEnd) {
  Clock clock;
  JobQueue q(open(), options(clock));
  const auto id = q.enqueue(spec()).job.id;
  ASSERT_TRUE(q.fail_unstarted(id, "sbatch: invalid partition"));
  Job j = *q.job(id);
  EXPECT_EQ(j.state, JobState::kQueued);
  EXPECT_EQ(j.attempts, 1);
  EXPECT_EQ(j.error, "sbatch: invalid partition");
  EXPECT_EQ(j.not_before, clock.t + 30);
  EXPECT_FALSE(q.claim("r", {}, id));  // the backoff
  ASSERT_TRUE(q.fail_unstarted(id, "again"));
  ASSERT_TRUE(q.fail_unstarted(id, "and again"));
  j = *q.job(id);
  EXPECT_EQ(j.state, JobState::kFailed);
  EXPECT_EQ(j.attempts, 3);
  EXPECT_NE(j.summary.find("gave up after 3 attempt(s): and again"), std::string::npos) << j.summary;
  EXPECT_FALSE(q.fail_unstarted(id, "not queued"));
}

TEST_P(JobQueueStore, CancelQueuedAtOnceAndRunningThroughTheHeartbeat) {
  Clock clock;
  JobQueue q(open(), options(clock));
  const auto running = q.enqueue(spec("acme/a")).job.id;
  const auto queued = q.enqueue(spec("acme/b")).job.id;
  auto c = q.claim("r", {});
  ASSERT_EQ(c->job.id, running);
  EXPECT_TRUE(q.cancel(queued));
  EXPECT_EQ(q.job(queued)->state, JobState::kCancelled);
  EXPECT_TRUE(q.cancel(running));
  EXPECT_EQ(q.job(running)->state, JobState::kRunning);
  EXPECT_EQ(q.heartbeat(running, c->lease), JobQueue::Lease::kCancel);
  EXPECT_TRUE(q.acknowledge_cancel(running, c->lease));
  EXPECT_EQ(q.job(running)->state, JobState::kCancelled);
  EXPECT_FALSE(q.cancel(running));

  // A runner killed after the cancel was asked for, before it said so: when its lease
  // expires the job is cancelled, not queued for another attempt.
  const auto killed = q.enqueue(spec("acme/c")).job.id;
  c = q.claim("r", {});
  ASSERT_EQ(c->job.id, killed);
  EXPECT_TRUE(q.cancel(killed));
  clock.t += 61;
  EXPECT_EQ(q.expire_leases(), std::vector<std::int64_t>{killed});
  EXPECT_EQ(q.job(killed)->state, JobState::kCancelled);
  EXPECT_EQ(q.job(killed)->attempts, 1);
  EXPECT_FALSE(q.claim("r", {}));
}

TEST_P(JobQueueStore, DeliveriesAreStoredOnceAndSurviveARestart) {
  Clock clock;
  std::int64_t id;
  std::string lease;
  {
    JobQueue q(open(), options(clock));
    EXPECT_TRUE(q.deliveries.record("d-1", "push", "{\"a\":1}"));
    EXPECT_FALSE(q.deliveries.record("d-1", "push", "{\"a\":1}"));
    EXPECT_TRUE(q.deliveries.record("d-2", "issue_comment", "{}"));
    id = q.enqueue(spec()).job.id;
    auto c = q.claim("r", {});
    lease = c->lease;
    q.installations.set("77", "acme", "active", nlohmann::json::array({"acme/histo"}));
  }  // the process "dies" here: nothing is flushed by hand
  JobQueue q(open(), options(clock));
  EXPECT_FALSE(q.deliveries.record("d-1", "push", "{}"));  // still known after the restart
  auto pending = q.deliveries.pending();
  ASSERT_EQ(pending.size(), 2u);
  EXPECT_EQ(pending[0].id, "d-1");
  EXPECT_EQ(pending[0].payload, "{\"a\":1}");
  q.deliveries.finish("d-1", DeliveryState::kHandled, "ok");
  // A transient failure: tried again after the wait (as GitHub asked), then given up.
  EXPECT_TRUE(q.deliveries.defer("d-2", "GitHub 502", 2, 10));
  EXPECT_EQ(q.deliveries.attempts("d-2"), 1);
  EXPECT_TRUE(q.deliveries.pending().empty());
  clock.t += 11;
  ASSERT_EQ(q.deliveries.pending().size(), 1u);
  EXPECT_FALSE(q.deliveries.defer("d-2", "GitHub 502", 2, 10));
  EXPECT_TRUE(q.deliveries.pending().empty());
  EXPECT_EQ(q.deliveries.count(), 2);
  // The running job and its lease are still there.
  EXPECT_EQ(q.job(id)->state, JobState::kRunning);
  EXPECT_EQ(q.heartbeat(id, lease), JobQueue::Lease::kHeld);
  EXPECT_EQ(q.installations.for_repo("acme/histo"), "77");
  EXPECT_EQ(q.installations.repos("77"), std::vector<std::string>{"acme/histo"});
  q.installations.add_repos("77", nlohmann::json::array({"acme/new"}), nlohmann::json::array({"acme/histo"}));
  EXPECT_EQ(q.installations.repos("77"), std::vector<std::string>{"acme/new"});
  q.installations.set("77", "acme", "suspended", nullptr);
  EXPECT_FALSE(q.installations.for_repo("acme/new"));
}

// GitHub's redelivery keeps the id: dropped when the delivery was handled (or is still
// pending), handled again when its handling failed. The same bytes under a new id are a
// replay (the signature does not cover the id): dropped within the window, naming the
// first id.
TEST_P(JobQueueStore, RedeliveriesRetryOnlyFailuresAndReplaysAreRecognised) {
  Clock clock;
  JobQueue q(open(), options(clock));
  using Kind = DeliveryLog::Recorded::Kind;
  EXPECT_EQ(q.deliveries.record("d-1", "push", R"({"after":"c1"})").kind, Kind::kStored);
  EXPECT_EQ(q.deliveries.record("d-1", "push", R"({"after":"c1"})").kind, Kind::kDuplicate);  // still pending
  const auto replay = q.deliveries.record("d-9", "push", R"({"after":"c1"})");
  EXPECT_EQ(replay.kind, Kind::kReplayed);
  EXPECT_EQ(replay.original, "d-1");
  EXPECT_FALSE(replay);
  q.deliveries.finish("d-1", DeliveryState::kHandled, "job 1");
  EXPECT_EQ(q.deliveries.record("d-1", "push", R"({"after":"c1"})").kind, Kind::kDuplicate);

  EXPECT_EQ(q.deliveries.record("d-2", "issue_comment", R"({"comment":2})").kind, Kind::kStored);
  q.deliveries.finish("d-2", DeliveryState::kFailed, "GitHub 500");
  const auto retried = q.deliveries.record("d-2", "issue_comment", R"({"comment":2})");
  EXPECT_EQ(retried.kind, Kind::kRetried);
  EXPECT_TRUE(retried);
  ASSERT_EQ(q.deliveries.pending().size(), 1u);
  EXPECT_EQ(q.deliveries.pending()[0].payload, R"({"comment":2})");
  q.deliveries.finish("d-2", DeliveryState::kHandled, "job 2");
  EXPECT_EQ(q.deliveries.record("d-2", "issue_comment", R"({"comment":2})").kind, Kind::kDuplicate);

  // Past the window the bytes are new again (the job key still finds the job).
  clock.t += q.options().replay_window_s + 1;
  EXPECT_EQ(q.deliveries.record("d-10", "push", R"({"after":"c1"})").kind, Kind::kStored);
}

// "Re-run" in the Checks tab: a finished job runs again with a new check run; a queued
// or running one is left alone.
TEST_P(JobQueueStore, ARerunQueuesAFinishedJobWithANewCheckRun) {
  Clock clock;
  JobQueue q(open(), options(clock));
  const std::int64_t id = q.enqueue(spec()).job.id;
  q.set_check_run(id, 555);
  EXPECT_EQ(q.job_by_check_run(555)->id, id);
  EXPECT_FALSE(q.rerun(id, "alice"));  // queued already
  auto c = q.claim("r", {});
  ASSERT_TRUE(c);
  EXPECT_TRUE(q.complete(id, c->lease, JobResult{}));
  q.finish(id, JobState::kDone, "created", "faster", "https://example/pull/1");
  EXPECT_TRUE(q.rerun(id, "bob"));
  const Job j = *q.job(id);
  EXPECT_EQ(j.state, JobState::kQueued);
  EXPECT_EQ(j.attempts, 0);
  EXPECT_EQ(j.check_run_id, 0);
  EXPECT_EQ(j.pr_url, "");
  EXPECT_EQ(j.requested_by, "bob");
  EXPECT_FALSE(q.job_by_check_run(555));
}

// Work that takes time outside the store is leased: of two replicas asking at once, one
// gets a delivery, a job's results, a job's report or a scheduled sweep; the other gets it after the
// lease runs out (the first died), or never once it is done.
TEST_P(JobQueueStore, LeasedWorkHasOneHolderAtATime) {
  Clock clock;
  QueueOptions o = options(clock);
  o.work_lease_s = 100;
  JobQueue a(open(), o), b(open(), o);
  ASSERT_TRUE(a.deliveries.record("d-1", "push", "{}"));
  EXPECT_EQ(a.deliveries.take().size(), 1u);
  EXPECT_TRUE(b.deliveries.take().empty());
  EXPECT_EQ(b.deliveries.pending().size(), 1u);  // still pending: only leased
  clock.t += 101;                                // replica a died holding it
  ASSERT_EQ(b.deliveries.take().size(), 1u);
  b.deliveries.finish("d-1", DeliveryState::kHandled, "ok");
  clock.t += 101;
  EXPECT_TRUE(a.deliveries.take().empty());

  const auto id = a.enqueue(spec()).job.id;
  const auto claim = b.claim("r", {});
  ASSERT_TRUE(claim);
  EXPECT_FALSE(a.leases.take_results(id));  // running, not delivering
  ASSERT_TRUE(b.complete(id, claim->lease, JobResult{.dir = "/data/jobs/1/attempt-1", .exit_code = 0}));
  const auto held = a.leases.take_results(id);
  ASSERT_TRUE(held);
  EXPECT_FALSE(b.leases.take_results(id));
  a.leases.release_results(id, *held);  // GitHub asked for time: any replica may try later
  EXPECT_TRUE(b.leases.take_results(id));
  b.finish(id, JobState::kDone, "created", "a PR", "http://pr/1");
  clock.t += 101;
  EXPECT_FALSE(a.leases.take_results(id));

  EXPECT_TRUE(a.leases.take_report(id));
  EXPECT_FALSE(b.leases.take_report(id));  // a reports it: b waits
  a.leases.end_report(id);
  EXPECT_TRUE(b.leases.take_report(id));
  clock.t += 101;                   // b died reporting
  EXPECT_TRUE(a.leases.take_report(id));

  a.schedule.set_run("nightly", 5);
  EXPECT_TRUE(a.schedule.take_run("nightly", 5));
  EXPECT_FALSE(b.schedule.take_run("nightly", 5));
  a.schedule.set_run("nightly", clock.t);           // swept
  EXPECT_FALSE(b.schedule.take_run("nightly", 5));  // read before the sweep: already run
  EXPECT_TRUE(b.schedule.take_run("nightly", clock.t));
}

// Two replicas, two threads each, over one store: every thread enqueues every job and
// records every delivery (as webhooks sent to either replica, and redelivered), takes
// deliveries and claims jobs. Each key makes one job, each delivery is stored and
// handled once, each job is claimed once (a claimed job is finished at once, so a
// second claim would be a double run), and a repository never has two running jobs.
TEST_P(JobQueueStore, TwoReplicasNeverClaimOrStoreTwice) {
  QueueOptions o;  // the real clock: nothing expires during the test
  // Each replica with a pool of connections, as `maxcode serve` has: its two threads
  // race each other inside it as well.
  JobQueue a(open(), [this] { return open(); }, 2, o), b(open(), [this] { return open(); }, 2, o);
  constexpr int kRepos = 12, kCommits = 6;
  std::atomic<int> created{0}, stored{0};
  std::mutex mutex;
  std::map<std::int64_t, int> claims;
  std::map<std::string, int> handled;
  std::map<std::string, int> running;  // per repository, right now
  int most_running_in_a_repo = 0;
  auto work = [&](JobQueue& q, unsigned seed) {
    std::vector<std::pair<int, int>> keys;
    for (int r = 0; r < kRepos; ++r)
      for (int c = 0; c < kCommits; ++c) keys.push_back({r, c});
    std::shuffle(keys.begin(), keys.end(), std::mt19937(seed));
    auto drain_one = [&] {
      for (const Delivery& d : q.deliveries.take(3)) {
        {
          std::lock_guard lock(mutex);
          ++handled[d.id];
        }
        q.deliveries.finish(d.id, DeliveryState::kHandled, "test");
      }
      const auto claim = q.claim("runner-" + std::to_string(seed), {});
      if (!claim) return false;
      {
        std::lock_guard lock(mutex);
        ++claims[claim->job.id];
        most_running_in_a_repo = std::max(most_running_in_a_repo, ++running[claim->job.repo]);
      }
      {
        // Before complete(): until then the store has it running, so no other claim may
        // count another job of the repository.
        std::lock_guard lock(mutex);
        --running[claim->job.repo];
      }
      EXPECT_TRUE(q.complete(claim->job.id, claim->lease, JobResult{.dir = "/data/a", .exit_code = 0}));
      q.finish(claim->job.id, JobState::kDone, "no-winner", "", "");
      return true;
    };
    for (const auto& [r, c] : keys) {
      const std::string repo = "acme/r" + std::to_string(r), commit = "c" + std::to_string(c);
      if (q.enqueue(spec(repo, commit)).created) ++created;
      if (q.deliveries.record("d-" + std::to_string(r) + "-" + std::to_string(c), "push",
                              R"({"repo":")" + repo + R"(","after":")" + commit + "\"}"))
        ++stored;
      drain_one();
    }
    for (int idle = 0; idle < 3;) idle = drain_one() ? 0 : idle + 1;
  };
  std::vector<std::thread> threads;
  threads.emplace_back(work, std::ref(a), 1u);
  threads.emplace_back(work, std::ref(a), 2u);
  threads.emplace_back(work, std::ref(b), 3u);
  threads.emplace_back(work, std::ref(b), 4u);
  for (auto& t : threads) t.join();
  // What a thread left when its last look found nothing (another held it meanwhile).
  while (!a.deliveries.take().empty() || a.claim("late", {})) ADD_FAILURE() << "work left after every thread stopped";

  EXPECT_EQ(created.load(), kRepos * kCommits);
  EXPECT_EQ(stored.load(), kRepos * kCommits);
  EXPECT_EQ(a.jobs("", {}, 1000).size(), static_cast<std::size_t>(kRepos * kCommits));
  EXPECT_EQ(b.counts_by_state()["done"], kRepos * kCommits);
  EXPECT_EQ(claims.size(), static_cast<std::size_t>(kRepos * kCommits));
  for (const auto& [id, n] : claims) EXPECT_EQ(n, 1) << "job " << id << " claimed " << n << " times";
  EXPECT_EQ(handled.size(), static_cast<std::size_t>(kRepos * kCommits));
  for (const auto& [id, n] : handled) EXPECT_EQ(n, 1) << "delivery " << id << " handled " << n << " times";
  EXPECT_EQ(most_running_in_a_repo, 1);
}

}  // namespace
}  // namespace maxcode::bot::service
