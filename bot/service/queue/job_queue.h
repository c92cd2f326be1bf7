// The service's durable state: jobs here; webhook deliveries, runners, installations,
// ignored targets and schedule runs in classes of their own (delivery_log.h,
// runner_registry.h, installations.h, ignored_targets.h, schedule_runs.h) on the same
// connections, all in SQLite (WAL; one `maxcode serve`) or PostgreSQL (shared
// by replicas), through sql_database.h. Every change is one transaction, so a `kill -9`
// at any moment leaves either the old or the new state.
//
// Replicas: each process has its own JobQueue (its own connection) on one PostgreSQL.
// The connection pool only keeps each connection to one thread; between connections and
// processes the rules hold by the database: claims take an advisory lock (the one-running-job-per-
// repository rule is about a set of rows) and lock their rows with FOR UPDATE SKIP
// LOCKED; a key inserted twice at once makes one row (ON CONFLICT); state changes say
// the state they expect in their WHERE (rerun, cancel, expiry), so two replicas doing
// the same thing do it once; work that takes time outside the store (handling a
// delivery, delivering a job's results, a scheduled sweep) is leased, so that one
// replica does it, and another after the lease runs out if that one died.
//
// A job's life:   queued -> running (leased by a runner) -> delivering -> done
//                     ^          |  lease lost / attempt failed: back to queued after a
//                     +----------+  backoff (base * 2^(attempt-1)), or failed when the
//                                   attempts are spent
//                 queued | running -> cancelled (/maxcode cancel; a running job's runner
//                                     learns it from its next heartbeat)
// The idempotency key (repository, commit, target, trigger) is unique: a redelivered
// webhook or a restart finds the job that exists instead of making a second one.
// A repository never has two jobs running at once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bot/service/queue/delivery_log.h"
#include "bot/service/queue/ignored_targets.h"
#include "bot/service/queue/installations.h"
#include "bot/service/queue/job_result.h"
#include "bot/service/queue/job_state.h"
#include "bot/service/queue/queue_options.h"
#include "bot/service/queue/result_leases.h"
#include "bot/service/queue/runner_registry.h"
#include "bot/service/queue/schedule_runs.h"
#include "bot/service/queue/sql_database.h"
#include "bot/service/queue/sql_pool.h"

namespace maxcode::bot::service {

struct JobSpec {
  std::string repo;             // OWNER/NAME
  std::string installation_id;  // the GitHub App installation that may act on it
  std::string commit;
  std::string target;           // a function; empty = the profiler's top targets
  std::string trigger;          // push | comment | schedule
  std::string policy;           // empty = the repository's configured one
  std::int64_t issue_number = 0;  // where to answer (comment trigger), 0 = nowhere
  std::string requested_by;
  std::vector<std::string> labels;  // runner labels the job needs (e.g. gpu)
};

struct Job : JobSpec {
  std::int64_t id = 0;
  std::string key;
  JobState state = JobState::kQueued;
  int attempts = 0, max_attempts = 0;
  double not_before = 0;
  std::string lease, runner;
  double lease_expires = 0, heartbeat_at = 0;
  double created_at = 0, started_at = 0, finished_at = 0;
  std::int64_t check_run_id = 0;
  std::string outcome;     // after delivery: created | updated | no-winner | ...
  std::string summary;     // one paragraph for people (comment, check run, dashboard)
  std::string pr_url;
  std::string error;
  bool cancel_requested = false;
  JobResult result;  // what the runner reported, and what delivery did with it
  nlohmann::json to_json() const;
};

class JobQueue {
  // First: the tables' classes below hold references to them.
  QueueOptions options_;
  SqlPool pool_;

 public:
  // The SQLite file `db_file`, or the store `store` names (sql_database.h).
  JobQueue(const std::filesystem::path& db_file, QueueOptions options = {});
  JobQueue(std::unique_ptr<SqlDatabase> store, QueueOptions options = {});
  // With up to `connections` connections, more opened by `open_more` as threads need
  // them (sql_pool.h says why).
  JobQueue(std::unique_ptr<SqlDatabase> store, SqlPool::Opener open_more, int connections, QueueOptions options = {});

  // --- jobs ----------------------------------------------------------------------
  struct Enqueued {
    Job job;
    bool created = false;   // false: the key existed (the job as it is)
    bool reopened = false;  // a failed or cancelled job with this key was queued again
  };
  // `reopen`: a job with this key that failed or was cancelled is queued again (a
  // person asked again); a done, queued or running one is returned as it is.
  Enqueued enqueue(const JobSpec& spec, bool reopen = false);
  static std::string key_of(const JobSpec& spec);

  struct Claim {
    Job job;
    std::string lease;
  };
  // The oldest queued job whose labels the runner has, whose backoff has passed and
  // whose repository has no running job; leased to `runner`. `only` != 0: that job and
  // no other, whatever its labels (a runner started for it: the Slurm backend).
  std::optional<Claim> claim(const std::string& runner, const std::vector<std::string>& labels, std::int64_t only = 0);

  enum class Lease { kHeld, kLost, kCancel };
  Lease heartbeat(std::int64_t id, const std::string& lease);
  // The runner's result arrived: running -> delivering (false: the lease is not held,
  // the result is dropped).
  bool complete(std::int64_t id, const std::string& lease, const JobResult& result);
  // The attempt failed (the runner says so): back to the queue with a backoff, or
  // failed. False when the lease is not held.
  bool fail_attempt(std::int64_t id, const std::string& lease, const std::string& error);
  // A queued job whose attempt could not even start (the Slurm backend's sbatch failed):
  // the attempt counts, and the job is queued again after the backoff or failed, with
  // `error`. False when the job is not queued.
  bool fail_unstarted(std::int64_t id, const std::string& error);
  // Running jobs whose lease expired go back to the queue (or fail); those whose cancel
  // was asked for are cancelled. Returns their ids.
  std::vector<std::int64_t> expire_leases();
  // delivering -> done | failed, with what came of it.
  void finish(std::int64_t id, JobState state, const std::string& outcome, const std::string& summary,
              const std::string& pr_url, const std::optional<JobResult>& result = std::nullopt);
  // GitHub's "Re-run" (check_run / check_suite rerequested): a finished job (done,
  // failed, cancelled) is queued again as a new run, with check_run_id 0 so that the
  // new run gets its own check run, as GitHub expects. False when it is queued or
  // running already (nothing to do) or unknown.
  bool rerun(std::int64_t id, const std::string& requested_by);
  // queued -> cancelled at once; running -> cancel requested. False when finished.
  bool cancel(std::int64_t id);
  // A running job the runner reports as cancelled.
  bool acknowledge_cancel(std::int64_t id, const std::string& lease);
  void set_check_run(std::int64_t id, std::int64_t check_run_id);
  // The job whose check run GitHub knows by `check_run_id`, if any.
  std::optional<Job> job_by_check_run(std::int64_t check_run_id);

  std::optional<Job> job(std::int64_t id);
  // Newest first; `repo` empty = all; `states` empty = any.
  std::vector<Job> jobs(const std::string& repo = "", const std::vector<JobState>& states = {}, int limit = 200);
  // 1-based place among queued jobs (0 when not queued).
  int queue_position(std::int64_t id);
  std::map<std::string, int> counts_by_state();

  // The other tables of the store, on the same connections.
  DeliveryLog deliveries{{pool_, options_}};
  RunnerRegistry runners{{pool_, options_}};
  Installations installations{{pool_, options_}};
  IgnoredTargets ignored{{pool_, options_}};
  ScheduleRuns schedule{{pool_, options_}};
  // The leases on a delivering job's results and on its report (result_leases.h).
  ResultLeases leases{{pool_, options_}};

  // SQLite's journal mode ("wal"); empty on PostgreSQL.
  std::string journal_mode();
  // The engine and where, for the log (never a password).
  std::string describe_store();
  double now() const { return options_.now(); }
  const QueueOptions& options() const { return options_; }

 private:
  std::vector<Job> select_jobs(SqlDatabase& db, const std::string& where, const std::vector<SqlValue>& values);
  // False when the job is no longer running under the lease it was read with.
  bool requeue_or_fail(SqlDatabase& db, const Job& job, const std::string& error);
};

}  // namespace maxcode::bot::service
