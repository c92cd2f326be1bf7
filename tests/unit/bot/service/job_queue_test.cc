// The durable queue on a real SQLite file, with a clock the test moves: states, leases
// that expire, retries with backoff, idempotency keys, cancel, labels, one running job
// per repository, WAL mode and surviving a reopen (a restart).
#include "bot/service/job_queue.h"

#include <gtest/gtest.h>

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

TEST(JobQueue, RunsAJobThroughItsStates) {
  testing::TempDir dir;
  Clock clock;
  JobQueue q(dir / "q.sqlite", options(clock));
  EXPECT_EQ(q.journal_mode(), "wal");
  const auto e = q.enqueue(spec());
  ASSERT_TRUE(e.created);
  EXPECT_EQ(e.job.state, "queued");
  EXPECT_EQ(q.queue_position(e.job.id), 1);
  auto claim = q.claim("r1", {});
  ASSERT_TRUE(claim);
  EXPECT_EQ(claim->job.id, e.job.id);
  EXPECT_EQ(claim->job.state, "running");
  EXPECT_EQ(claim->job.attempts, 1);
  EXPECT_EQ(q.queue_position(e.job.id), 0);
  EXPECT_FALSE(q.claim("r2", {}));  // nothing else queued
  EXPECT_EQ(q.heartbeat(e.job.id, claim->lease), JobQueue::Lease::kHeld);
  EXPECT_EQ(q.heartbeat(e.job.id, "not-the-lease"), JobQueue::Lease::kLost);
  EXPECT_FALSE(q.complete(e.job.id, "not-the-lease", {{"x", 1}}));
  ASSERT_TRUE(q.complete(e.job.id, claim->lease, {{"x", 1}}));
  EXPECT_EQ(q.job(e.job.id)->state, "delivering");
  EXPECT_FALSE(q.complete(e.job.id, claim->lease, {{"x", 2}}));  // a second upload of the same result
  q.finish(e.job.id, "done", "created", "a PR", "http://pr/1");
  const auto done = q.job(e.job.id);
  EXPECT_EQ(done->state, "done");
  EXPECT_EQ(done->pr_url, "http://pr/1");
  EXPECT_EQ(done->result["x"], 1);
  EXPECT_EQ(q.counts_by_state()["done"], 1);
}

TEST(JobQueue, TheSameKeyNeverMakesASecondJob) {
  testing::TempDir dir;
  Clock clock;
  JobQueue q(dir / "q.sqlite", options(clock));
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
  EXPECT_EQ(q.job(first.job.id)->state, "cancelled");
  EXPECT_FALSE(q.enqueue(spec()).reopened);
  const auto reopened = q.enqueue(spec(), true);
  EXPECT_TRUE(reopened.reopened);
  EXPECT_EQ(reopened.job.id, first.job.id);
  EXPECT_EQ(reopened.job.state, "queued");
  EXPECT_EQ(q.jobs().size(), 4u);
}

TEST(JobQueue, AnExpiredLeaseReturnsTheJobWithBackoffThenFails) {
  testing::TempDir dir;
  Clock clock;
  JobQueue q(dir / "q.sqlite", options(clock));
  const auto id = q.enqueue(spec()).job.id;
  auto c1 = q.claim("r1", {});
  ASSERT_TRUE(c1);
  clock.t += 59;
  EXPECT_TRUE(q.expire_leases().empty());
  EXPECT_EQ(q.heartbeat(id, c1->lease), JobQueue::Lease::kHeld);  // extends to t + 60
  clock.t += 61;
  EXPECT_EQ(q.expire_leases(), std::vector<std::int64_t>{id});
  auto j = q.job(id);
  EXPECT_EQ(j->state, "queued");
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
  EXPECT_EQ(j->state, "failed");  // three attempts spent
  EXPECT_NE(j->summary.find("gave up after 3 attempt(s): clone failed again"), std::string::npos) << j->summary;
}

TEST(JobQueue, LabelsAndOneRunningJobPerRepository) {
  testing::TempDir dir;
  Clock clock;
  JobQueue q(dir / "q.sqlite", options(clock));
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
TEST(JobQueue, AClaimForOneJobTakesThatJobOnly) {
  testing::TempDir dir;
  Clock clock;
  JobQueue q(dir / "q.sqlite", options(clock));
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
TEST(JobQueue, AnUnstartedAttemptCountsAndFailsTheJobAtTheEnd) {
  testing::TempDir dir;
  Clock clock;
  JobQueue q(dir / "q.sqlite", options(clock));
  const auto id = q.enqueue(spec()).job.id;
  ASSERT_TRUE(q.fail_unstarted(id, "sbatch: invalid partition"));
  Job j = *q.job(id);
  EXPECT_EQ(j.state, "queued");
  EXPECT_EQ(j.attempts, 1);
  EXPECT_EQ(j.error, "sbatch: invalid partition");
  EXPECT_EQ(j.not_before, clock.t + 30);
  EXPECT_FALSE(q.claim("r", {}, id));  // the backoff
  ASSERT_TRUE(q.fail_unstarted(id, "again"));
  ASSERT_TRUE(q.fail_unstarted(id, "and again"));
  j = *q.job(id);
  EXPECT_EQ(j.state, "failed");
  EXPECT_EQ(j.attempts, 3);
  EXPECT_NE(j.summary.find("gave up after 3 attempt(s): and again"), std::string::npos) << j.summary;
  EXPECT_FALSE(q.fail_unstarted(id, "not queued"));
}

TEST(JobQueue, CancelQueuedAtOnceAndRunningThroughTheHeartbeat) {
  testing::TempDir dir;
  Clock clock;
  JobQueue q(dir / "q.sqlite", options(clock));
  const auto running = q.enqueue(spec("acme/a")).job.id;
  const auto queued = q.enqueue(spec("acme/b")).job.id;
  auto c = q.claim("r", {});
  ASSERT_EQ(c->job.id, running);
  EXPECT_TRUE(q.cancel(queued));
  EXPECT_EQ(q.job(queued)->state, "cancelled");
  EXPECT_TRUE(q.cancel(running));
  EXPECT_EQ(q.job(running)->state, "running");
  EXPECT_EQ(q.heartbeat(running, c->lease), JobQueue::Lease::kCancel);
  EXPECT_TRUE(q.acknowledge_cancel(running, c->lease));
  EXPECT_EQ(q.job(running)->state, "cancelled");
  EXPECT_FALSE(q.cancel(running));

  // A runner killed after the cancel was asked for, before it said so: when its lease
  // expires the job is cancelled, not queued for another attempt.
  const auto killed = q.enqueue(spec("acme/c")).job.id;
  c = q.claim("r", {});
  ASSERT_EQ(c->job.id, killed);
  EXPECT_TRUE(q.cancel(killed));
  clock.t += 61;
  EXPECT_EQ(q.expire_leases(), std::vector<std::int64_t>{killed});
  EXPECT_EQ(q.job(killed)->state, "cancelled");
  EXPECT_EQ(q.job(killed)->attempts, 1);
  EXPECT_FALSE(q.claim("r", {}));
}

TEST(JobQueue, DeliveriesAreStoredOnceAndSurviveARestart) {
  testing::TempDir dir;
  Clock clock;
  std::int64_t id;
  std::string lease;
  {
    JobQueue q(dir / "q.sqlite", options(clock));
    EXPECT_TRUE(q.record_delivery("d-1", "push", "{\"a\":1}"));
    EXPECT_FALSE(q.record_delivery("d-1", "push", "{\"a\":1}"));
    EXPECT_TRUE(q.record_delivery("d-2", "issue_comment", "{}"));
    id = q.enqueue(spec()).job.id;
    auto c = q.claim("r", {});
    lease = c->lease;
    q.set_installation("77", "acme", "active", nlohmann::json::array({"acme/histo"}));
  }  // the process "dies" here: nothing is flushed by hand
  JobQueue q(dir / "q.sqlite", options(clock));
  EXPECT_FALSE(q.record_delivery("d-1", "push", "{}"));  // still known after the restart
  auto pending = q.pending_deliveries();
  ASSERT_EQ(pending.size(), 2u);
  EXPECT_EQ(pending[0].id, "d-1");
  EXPECT_EQ(pending[0].payload, "{\"a\":1}");
  q.finish_delivery("d-1", "handled", "ok");
  // A transient failure: tried again after the wait (as GitHub asked), then given up.
  EXPECT_TRUE(q.defer_delivery("d-2", "GitHub 502", 2, 10));
  EXPECT_EQ(q.delivery_attempts("d-2"), 1);
  EXPECT_TRUE(q.pending_deliveries().empty());
  clock.t += 11;
  ASSERT_EQ(q.pending_deliveries().size(), 1u);
  EXPECT_FALSE(q.defer_delivery("d-2", "GitHub 502", 2, 10));
  EXPECT_TRUE(q.pending_deliveries().empty());
  EXPECT_EQ(q.delivery_count(), 2);
  // The running job and its lease are still there.
  EXPECT_EQ(q.job(id)->state, "running");
  EXPECT_EQ(q.heartbeat(id, lease), JobQueue::Lease::kHeld);
  EXPECT_EQ(q.installation_for("acme/histo"), "77");
  EXPECT_EQ(q.installation_repos("77"), std::vector<std::string>{"acme/histo"});
  q.add_installation_repos("77", nlohmann::json::array({"acme/new"}), nlohmann::json::array({"acme/histo"}));
  EXPECT_EQ(q.installation_repos("77"), std::vector<std::string>{"acme/new"});
  q.set_installation("77", "acme", "suspended", nullptr);
  EXPECT_FALSE(q.installation_for("acme/new"));
}

// GitHub's redelivery keeps the id: dropped when the delivery was handled (or is still
// pending), handled again when its handling failed. The same bytes under a new id are a
// replay (the signature does not cover the id): dropped within the window, naming the
// first id.
TEST(JobQueue, RedeliveriesRetryOnlyFailuresAndReplaysAreRecognised) {
  testing::TempDir dir;
  Clock clock;
  JobQueue q(dir / "q.sqlite", options(clock));
  using Kind = JobQueue::Recorded::Kind;
  EXPECT_EQ(q.record_delivery("d-1", "push", R"({"after":"c1"})").kind, Kind::kStored);
  EXPECT_EQ(q.record_delivery("d-1", "push", R"({"after":"c1"})").kind, Kind::kDuplicate);  // still pending
  const auto replay = q.record_delivery("d-9", "push", R"({"after":"c1"})");
  EXPECT_EQ(replay.kind, Kind::kReplayed);
  EXPECT_EQ(replay.original, "d-1");
  EXPECT_FALSE(replay);
  q.finish_delivery("d-1", "handled", "job 1");
  EXPECT_EQ(q.record_delivery("d-1", "push", R"({"after":"c1"})").kind, Kind::kDuplicate);

  EXPECT_EQ(q.record_delivery("d-2", "issue_comment", R"({"comment":2})").kind, Kind::kStored);
  q.finish_delivery("d-2", "failed", "GitHub 500");
  const auto retried = q.record_delivery("d-2", "issue_comment", R"({"comment":2})");
  EXPECT_EQ(retried.kind, Kind::kRetried);
  EXPECT_TRUE(retried);
  ASSERT_EQ(q.pending_deliveries().size(), 1u);
  EXPECT_EQ(q.pending_deliveries()[0].payload, R"({"comment":2})");
  q.finish_delivery("d-2", "handled", "job 2");
  EXPECT_EQ(q.record_delivery("d-2", "issue_comment", R"({"comment":2})").kind, Kind::kDuplicate);

  // Past the window the bytes are new again (the job key still finds the job).
  clock.t += q.options().replay_window_s + 1;
  EXPECT_EQ(q.record_delivery("d-10", "push", R"({"after":"c1"})").kind, Kind::kStored);
}

// "Re-run" in the Checks tab: a finished job runs again with a new check run; a queued
// or running one is left alone.
TEST(JobQueue, ARerunQueuesAFinishedJobWithANewCheckRun) {
  testing::TempDir dir;
  Clock clock;
  JobQueue q(dir / "q.sqlite", options(clock));
  const std::int64_t id = q.enqueue(spec()).job.id;
  q.set_check_run(id, 555);
  EXPECT_EQ(q.job_by_check_run(555)->id, id);
  EXPECT_FALSE(q.rerun(id, "alice"));  // queued already
  auto c = q.claim("r", {});
  ASSERT_TRUE(c);
  EXPECT_TRUE(q.complete(id, c->lease, nlohmann::json::object()));
  q.finish(id, "done", "created", "faster", "https://example/pull/1");
  EXPECT_TRUE(q.rerun(id, "bob"));
  const Job j = *q.job(id);
  EXPECT_EQ(j.state, "queued");
  EXPECT_EQ(j.attempts, 0);
  EXPECT_EQ(j.check_run_id, 0);
  EXPECT_EQ(j.pr_url, "");
  EXPECT_EQ(j.requested_by, "bob");
  EXPECT_FALSE(q.job_by_check_run(555));
}

}  // namespace
}  // namespace maxcode::bot::service
