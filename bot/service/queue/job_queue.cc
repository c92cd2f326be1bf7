#include "bot/service/queue/job_queue.h"
#include "runner/util/files.h"
#include "runner/util/hex.h"
#include "runner/util/json_io.h"

#include <openssl/rand.h>
#include <openssl/sha.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>
#include <tuple>

namespace maxcode::bot::service {

namespace {

using nlohmann::json;

// Written in the common part of SQLite's and PostgreSQL's DDL: BIGINT and DOUBLE
// PRECISION (SQLite reads them as INTEGER and REAL; PostgreSQL's INTEGER and REAL are 32
// bits, too few for GitHub's check run ids and for times in seconds). {ID} is the
// engine's auto-numbered key.
constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS deliveries(
  id TEXT PRIMARY KEY, event TEXT NOT NULL, received_at DOUBLE PRECISION NOT NULL, payload TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'received', note TEXT NOT NULL DEFAULT '',
  attempts BIGINT NOT NULL DEFAULT 0, retry_at DOUBLE PRECISION NOT NULL DEFAULT 0, body_sha256 TEXT NOT NULL DEFAULT '',
  lease_expires DOUBLE PRECISION NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS deliveries_state ON deliveries(state, received_at);
CREATE TABLE IF NOT EXISTS jobs(
  {ID}, key TEXT NOT NULL UNIQUE, repo TEXT NOT NULL, installation_id TEXT NOT NULL,
  commit_sha TEXT NOT NULL, target TEXT NOT NULL, trigger TEXT NOT NULL, policy TEXT NOT NULL,
  issue_number BIGINT NOT NULL, requested_by TEXT NOT NULL, labels TEXT NOT NULL,
  state TEXT NOT NULL, attempts BIGINT NOT NULL DEFAULT 0, max_attempts BIGINT NOT NULL,
  not_before DOUBLE PRECISION NOT NULL DEFAULT 0, lease TEXT NOT NULL DEFAULT '', runner TEXT NOT NULL DEFAULT '',
  lease_expires DOUBLE PRECISION NOT NULL DEFAULT 0, heartbeat_at DOUBLE PRECISION NOT NULL DEFAULT 0,
  created_at DOUBLE PRECISION NOT NULL, started_at DOUBLE PRECISION NOT NULL DEFAULT 0,
  finished_at DOUBLE PRECISION NOT NULL DEFAULT 0,
  check_run_id BIGINT NOT NULL DEFAULT 0, outcome TEXT NOT NULL DEFAULT '', summary TEXT NOT NULL DEFAULT '',
  pr_url TEXT NOT NULL DEFAULT '', error TEXT NOT NULL DEFAULT '', cancel_requested BIGINT NOT NULL DEFAULT 0,
  result TEXT NOT NULL DEFAULT 'null', report_until DOUBLE PRECISION NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state, id);
CREATE TABLE IF NOT EXISTS runners(name TEXT PRIMARY KEY, labels TEXT NOT NULL, last_seen DOUBLE PRECISION NOT NULL,
  job_id BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS installations(id TEXT PRIMARY KEY, account TEXT NOT NULL, state TEXT NOT NULL,
  repos TEXT NOT NULL, updated_at DOUBLE PRECISION NOT NULL);
CREATE TABLE IF NOT EXISTS ignored_targets(repo TEXT NOT NULL, branch TEXT NOT NULL, head_sha TEXT NOT NULL,
  at DOUBLE PRECISION NOT NULL, PRIMARY KEY(repo, branch));
CREATE TABLE IF NOT EXISTS schedule_runs(name TEXT PRIMARY KEY, last_run DOUBLE PRECISION NOT NULL,
  taken_until DOUBLE PRECISION NOT NULL DEFAULT 0);
)sql";

std::string schema_for(const SqlDatabase& db) {
  std::string sql = kSchema;
  sql.replace(sql.find("{ID}"), 4, db.auto_id_column("id"));
  return sql;
}

constexpr const char* kJobColumns =
    "id, key, repo, installation_id, commit_sha, target, trigger, policy, issue_number, requested_by, labels, state, "
    "attempts, max_attempts, not_before, lease, runner, lease_expires, heartbeat_at, created_at, started_at, "
    "finished_at, check_run_id, outcome, summary, pr_url, error, cancel_requested, result";

Job job_from_row(const SqlRow& r) {
  Job j;
  j.id = r.integer(0);
  j.key = r.text(1);
  j.repo = r.text(2);
  j.installation_id = r.text(3);
  j.commit = r.text(4);
  j.target = r.text(5);
  j.trigger = r.text(6);
  j.policy = r.text(7);
  j.issue_number = r.integer(8);
  j.requested_by = r.text(9);
  j.labels = split_labels(r.text(10));
  j.state = job_state_from_name(r.text(11));
  j.attempts = static_cast<int>(r.integer(12));
  j.max_attempts = static_cast<int>(r.integer(13));
  j.not_before = r.real(14);
  j.lease = r.text(15);
  j.runner = r.text(16);
  j.lease_expires = r.real(17);
  j.heartbeat_at = r.real(18);
  j.created_at = r.real(19);
  j.started_at = r.real(20);
  j.finished_at = r.real(21);
  j.check_run_id = r.integer(22);
  j.outcome = r.text(23);
  j.summary = r.text(24);
  j.pr_url = r.text(25);
  j.error = r.text(26);
  j.cancel_requested = r.integer(27) != 0;
  j.result = job_result_from_text(r.text(28));
  return j;
}

}  // namespace

json Job::to_json() const {
  return {{"id", id},
          {"repository", repo},
          {"installation_id", installation_id},
          {"commit", commit},
          {"target", target},
          {"trigger", trigger},
          {"policy", policy},
          {"issue_number", issue_number},
          {"requested_by", requested_by},
          {"labels", labels},
          {"state", job_state_name(state)},
          {"attempts", attempts},
          {"max_attempts", max_attempts},
          {"not_before", not_before},
          {"runner", runner},
          {"lease_expires", lease_expires},
          {"heartbeat_at", heartbeat_at},
          {"created_at", created_at},
          {"started_at", started_at},
          {"finished_at", finished_at},
          {"check_run_id", check_run_id},
          {"outcome", outcome},
          {"summary", summary},
          {"pr_url", pr_url},
          {"error", error},
          {"cancel_requested", cancel_requested},
          {"result", service::to_json(result)}};
}

JobQueue::JobQueue(const std::filesystem::path& db_file, QueueOptions options)
    : JobQueue(open_sql_database(db_file.string(), "", "db"), std::move(options)) {}

JobQueue::JobQueue(std::unique_ptr<SqlDatabase> store, QueueOptions options)
    : JobQueue(std::move(store), nullptr, 1, std::move(options)) {}

JobQueue::JobQueue(std::unique_ptr<SqlDatabase> store, SqlPool::Opener open_more, int connections, QueueOptions options)
    : options_(std::move(options)), pool_(std::move(store), std::move(open_more), connections) {
  auto db = pool_.acquire();
  if (!options_.now)
    options_.now = [] {
      return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    };
  SqlTransaction tx(*db);
  // Two replicas starting at once would both create the tables (PostgreSQL's IF NOT
  // EXISTS is not safe against a concurrent CREATE).
  db->serialize("maxcode schema");
  db->exec(schema_for(*db));
  // Columns that stores made by older versions lack: body_sha256 (replays were not
  // recognised then), the leases of deliveries and of scheduled sweeps (one process then).
  db->add_column_if_missing("deliveries", "body_sha256", "TEXT NOT NULL DEFAULT ''");
  db->add_column_if_missing("deliveries", "lease_expires", "DOUBLE PRECISION NOT NULL DEFAULT 0");
  db->add_column_if_missing("schedule_runs", "taken_until", "DOUBLE PRECISION NOT NULL DEFAULT 0");
  db->add_column_if_missing("jobs", "report_until", "DOUBLE PRECISION NOT NULL DEFAULT 0");
  db->exec("CREATE INDEX IF NOT EXISTS deliveries_body ON deliveries(body_sha256, received_at)");
  if (db->dialect() == SqlDialect::kSqlite) {
    // One process owns an SQLite store: what the one before it held, it held when it died.
    db->exec("UPDATE deliveries SET lease_expires = 0 WHERE lease_expires > 0");
    db->exec("UPDATE schedule_runs SET taken_until = 0 WHERE taken_until > 0");
    db->exec("UPDATE jobs SET lease = '', lease_expires = 0 WHERE state = 'delivering' AND lease <> ''");
    db->exec("UPDATE jobs SET report_until = 0 WHERE report_until > 0");
  }
  tx.commit();
}

std::string JobQueue::journal_mode() {
  auto db = pool_.acquire();
  if (db->dialect() != SqlDialect::kSqlite) return "";
  std::string mode;
  db->run("PRAGMA journal_mode", {}, [&](const SqlRow& r) { mode = r.text(0); });
  return mode;
}

std::string JobQueue::describe_store() {
  auto db = pool_.acquire();
  return db->describe();
}

// --- jobs -------------------------------------------------------------------------------

std::string JobQueue::key_of(const JobSpec& s) {
  return s.repo + "|" + s.commit + "|" + (s.target.empty() ? "*" : s.target) + "|" + s.trigger;
}

std::vector<Job> JobQueue::select_jobs(SqlDatabase& db, const std::string& where, const std::vector<SqlValue>& values) {
  std::vector<Job> out;
  db.run(std::string("SELECT ") + kJobColumns + " FROM jobs " + where, values,
          [&](const SqlRow& r) { out.push_back(job_from_row(r)); });
  return out;
}

JobQueue::Enqueued JobQueue::enqueue(const JobSpec& s, bool reopen) {
  auto db = pool_.acquire();
  SqlTransaction tx(*db);
  Enqueued e;
  const std::string key = key_of(s);
  const int inserted = db->run(
      // The unique key decides between replicas: a concurrent insert of the same key
      // waits for the other transaction and then does nothing.
      "INSERT INTO jobs(key, repo, installation_id, commit_sha, target, trigger, policy, issue_number, "
      "requested_by, labels, state, max_attempts, created_at) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
      "'queued', ?11, ?12) "
      "ON CONFLICT(key) DO NOTHING",
      {key, s.repo, s.installation_id, s.commit, s.target, s.trigger, s.policy, s.issue_number, s.requested_by,
       join_labels(s.labels), std::int64_t{options_.max_attempts}, now()});
  e.created = inserted == 1;
  if (!e.created && reopen) {
    e.reopened = db->run(
                     "UPDATE jobs SET state = 'queued', attempts = 0, not_before = 0, error = '', outcome = '', "
                     "summary = '', cancel_requested = 0, issue_number = ?2, requested_by = ?3, policy = ?4 "
                     "WHERE key = ?1 AND state IN ('failed', 'cancelled')",
                     {key, s.issue_number, s.requested_by, s.policy}) == 1;
  }
  e.job = select_jobs(*db, "WHERE key = ?1", {key}).at(0);
  tx.commit();
  return e;
}

std::optional<JobQueue::Claim> JobQueue::claim(const std::string& runner, const std::vector<std::string>& labels,
                                               std::int64_t only) {
  auto db = pool_.acquire();
  SqlTransaction tx(*db);
  // Claims of all replicas one at a time: "no running job in this repository" is about
  // rows that another claim may be making running right now, which no row lock covers.
  db->serialize("maxcode claim");
  const double t = now();
  const std::string which =
      "WHERE state = 'queued' AND not_before <= ?1 AND repo NOT IN (SELECT repo FROM jobs WHERE state = 'running') ";
  // Rows a cancel, rerun or reopen holds are passed over, not waited for.
  const auto candidates =
      only ? select_jobs(*db, which + "AND id = ?2" + db->lock_rows_skip_locked(), {t, only})
           : select_jobs(*db, which + "ORDER BY id LIMIT 200" + db->lock_rows_skip_locked(), {t});
  for (const Job& j : candidates) {
    const bool fits = only || std::all_of(j.labels.begin(), j.labels.end(), [&](const std::string& l) {
      return std::find(labels.begin(), labels.end(), l) != labels.end();
    });
    if (!fits) continue;
    Claim c;
    c.lease = random_hex(16);
    if (db->run("UPDATE jobs SET state = 'running', lease = ?2, runner = ?3, lease_expires = ?4, heartbeat_at = ?5, "
                 "started_at = ?5, attempts = attempts + 1 WHERE id = ?1 AND state = 'queued'",
                 {j.id, c.lease, runner, t + options_.lease_s, t}) != 1)
      continue;
    c.job = select_jobs(*db, "WHERE id = ?1", {j.id}).at(0);
    tx.commit();
    return c;
  }
  return std::nullopt;
}

JobQueue::Lease JobQueue::heartbeat(std::int64_t id, const std::string& lease) {
  auto db = pool_.acquire();
  const double t = now();
  if (db->run("UPDATE jobs SET heartbeat_at = ?3, lease_expires = ?4 WHERE id = ?1 AND lease = ?2 AND state = 'running'",
              {id, lease, t, t + options_.lease_s}) != 1)
    return Lease::kLost;
  bool cancel = false;
  db->run("SELECT cancel_requested FROM jobs WHERE id = ?1", {id}, [&](const SqlRow& r) { cancel = r.integer(0) != 0; });
  return cancel ? Lease::kCancel : Lease::kHeld;
}

bool JobQueue::complete(std::int64_t id, const std::string& lease, const JobResult& result) {
  auto db = pool_.acquire();
  return db->run(
             "UPDATE jobs SET state = 'delivering', result = ?3, lease = '', heartbeat_at = ?4 "
             "WHERE id = ?1 AND lease = ?2 AND state = 'running'",
             {id, lease, dump_json(service::to_json(result)), now()}) == 1;
}

bool JobQueue::requeue_or_fail(SqlDatabase& db, const Job& j, const std::string& error) {
  const double t = now();
  if (j.attempts >= j.max_attempts) {
    return db.run("UPDATE jobs SET state = 'failed', lease = '', error = ?2, finished_at = ?3, outcome = 'failed', "
                    "summary = ?4 WHERE id = ?1 AND state = 'running' AND lease = ?5",
                    {j.id, error, t, "gave up after " + std::to_string(j.attempts) + " attempt(s): " + error, j.lease}) == 1;
  }
  const double delay = options_.backoff_s * std::pow(2.0, std::max(0, j.attempts - 1));
  // The state and lease in the WHERE: the job as it was read, not as another replica
  // made it since (expired already, and claimed again).
  return db.run("UPDATE jobs SET state = 'queued', lease = '', runner = '', error = ?2, not_before = ?3 "
                  "WHERE id = ?1 AND state = 'running' AND lease = ?4",
                  {j.id, error, t + delay, j.lease}) == 1;
}

bool JobQueue::fail_attempt(std::int64_t id, const std::string& lease, const std::string& error) {
  auto db = pool_.acquire();
  SqlTransaction tx(*db);
  auto found = select_jobs(*db, "WHERE id = ?1 AND lease = ?2 AND state = 'running'", {id, lease});
  if (found.empty()) return false;
  const bool changed = requeue_or_fail(*db, found[0], error);
  tx.commit();
  return changed;
}

bool JobQueue::fail_unstarted(std::int64_t id, const std::string& error) {
  auto db = pool_.acquire();
  SqlTransaction tx(*db);
  auto found = select_jobs(*db, "WHERE id = ?1 AND state = 'queued'" + db->lock_rows_skip_locked(), {id});
  if (found.empty()) return false;
  const Job& j = found[0];
  const int attempts = j.attempts + 1;
  const double t = now();
  // The attempts in the WHERE: the job as it was read, not as another replica made it.
  bool changed;
  if (attempts >= j.max_attempts) {
    changed = db->run("UPDATE jobs SET state = 'failed', attempts = ?5, lease = '', error = ?2, finished_at = ?3, "
                      "outcome = 'failed', summary = ?4 WHERE id = ?1 AND state = 'queued' AND attempts = ?6",
                      {id, error, t, "gave up after " + std::to_string(attempts) + " attempt(s): " + error,
                       std::int64_t{attempts}, std::int64_t{j.attempts}}) == 1;
  } else {
    const double delay = options_.backoff_s * std::pow(2.0, std::max(0, attempts - 1));
    changed = db->run("UPDATE jobs SET attempts = ?4, error = ?2, not_before = ?3 "
                      "WHERE id = ?1 AND state = 'queued' AND attempts = ?5",
                      {id, error, t + delay, std::int64_t{attempts}, std::int64_t{j.attempts}}) == 1;
  }
  tx.commit();
  return changed;
}

std::vector<std::int64_t> JobQueue::expire_leases() {
  auto db = pool_.acquire();
  SqlTransaction tx(*db);
  std::vector<std::int64_t> ids;
  // Both replicas' housekeepers look: each expires the rows it locked, once.
  for (const Job& j : select_jobs(*db, "WHERE state = 'running' AND lease_expires < ?1 ORDER BY id" + db->lock_rows_skip_locked(),
                                  {now()})) {
    // A person asked for it to stop, and its runner is gone (killed before it could say
    // so: a batch job cancelled with scancel, a lost node): it is cancelled, not run again.
    if (j.cancel_requested) {
      if (db->run("UPDATE jobs SET state = 'cancelled', lease = '', finished_at = ?2, outcome = 'cancelled', "
                  "summary = 'cancelled while it ran (its runner stopped answering)' "
                  "WHERE id = ?1 AND state = 'running' AND lease = ?3",
                  {j.id, now(), j.lease}) == 1)
        ids.push_back(j.id);
    } else if (requeue_or_fail(*db, j, "runner " + j.runner + " stopped sending heartbeats (lease expired)")) {
      ids.push_back(j.id);
    }
  }
  tx.commit();
  return ids;
}

void JobQueue::finish(std::int64_t id, JobState state, const std::string& outcome, const std::string& summary,
                      const std::string& pr_url, const std::optional<JobResult>& result) {
  auto db = pool_.acquire();
  if (!result)
    db->run(
        "UPDATE jobs SET state = ?2, outcome = ?3, summary = ?4, pr_url = ?5, finished_at = ?6, lease = '' WHERE id = "
        "?1",
        {id, job_state_name(state), outcome, summary, pr_url, now()});
  else
    db->run(
        "UPDATE jobs SET state = ?2, outcome = ?3, summary = ?4, pr_url = ?5, finished_at = ?6, result = ?7, lease = "
        "'' "
        "WHERE id = ?1",
        {id, job_state_name(state), outcome, summary, pr_url, now(), dump_json(service::to_json(*result))});
}

bool JobQueue::rerun(std::int64_t id, const std::string& requested_by) {
  auto db = pool_.acquire();
  return db->run("UPDATE jobs SET state = 'queued', attempts = 0, not_before = 0, error = '', outcome = '', summary = '', "
                 "pr_url = '', cancel_requested = 0, check_run_id = 0, result = 'null', requested_by = ?2 "
                 "WHERE id = ?1 AND state IN ('done', 'failed', 'cancelled')",
                 {id, requested_by}) == 1;
}

std::optional<Job> JobQueue::job_by_check_run(std::int64_t check_run_id) {
  auto db = pool_.acquire();
  if (check_run_id <= 0) return std::nullopt;
  auto rows = select_jobs(*db, "WHERE check_run_id = ?1", {check_run_id});
  if (rows.empty()) return std::nullopt;
  return rows.front();
}

bool JobQueue::cancel(std::int64_t id) {
  auto db = pool_.acquire();
  if (db->run("UPDATE jobs SET state = 'cancelled', finished_at = ?2, outcome = 'cancelled', summary = 'cancelled before it ran' "
              "WHERE id = ?1 AND state = 'queued'",
              {id, now()}) == 1)
    return true;
  return db->run("UPDATE jobs SET cancel_requested = 1 WHERE id = ?1 AND state = 'running'", {id}) == 1;
}

bool JobQueue::acknowledge_cancel(std::int64_t id, const std::string& lease) {
  auto db = pool_.acquire();
  return db->run("UPDATE jobs SET state = 'cancelled', lease = '', finished_at = ?3, outcome = 'cancelled', "
                 "summary = 'cancelled while it ran' WHERE id = ?1 AND lease = ?2 AND state = 'running'",
                 {id, lease, now()}) == 1;
}

void JobQueue::set_check_run(std::int64_t id, std::int64_t check_run_id) {
  auto db = pool_.acquire();
  db->run("UPDATE jobs SET check_run_id = ?2 WHERE id = ?1", {id, check_run_id});
}

std::optional<Job> JobQueue::job(std::int64_t id) {
  auto db = pool_.acquire();
  auto found = select_jobs(*db, "WHERE id = ?1", {id});
  if (found.empty()) return std::nullopt;
  return found[0];
}

std::vector<Job> JobQueue::jobs(const std::string& repo, const std::vector<JobState>& states, int limit) {
  auto db = pool_.acquire();
  std::string where = "WHERE (?1 = '' OR repo = ?1)";
  std::vector<SqlValue> values{repo};
  if (!states.empty()) {
    where += " AND state IN (";
    for (std::size_t i = 0; i < states.size(); ++i) {
      where += (i ? ", ?" : "?") + std::to_string(i + 2);
      values.push_back(job_state_name(states[i]));
    }
    where += ")";
  }
  values.push_back(std::int64_t{limit});
  return select_jobs(*db, where + " ORDER BY id DESC LIMIT ?" + std::to_string(values.size()), values);
}

int JobQueue::queue_position(std::int64_t id) {
  auto db = pool_.acquire();
  int position = 0;
  db->run("SELECT COUNT(*) FROM jobs WHERE state = 'queued' AND id <= ?1 AND EXISTS "
          "(SELECT 1 FROM jobs WHERE id = ?1 AND state = 'queued')",
          {id}, [&](const SqlRow& r) { position = static_cast<int>(r.integer(0)); });
  return position;
}

std::map<std::string, int> JobQueue::counts_by_state() {
  auto db = pool_.acquire();
  std::map<std::string, int> out;
  for (const char* s : {"queued", "running", "delivering", "done", "failed", "cancelled"}) out[s] = 0;
  db->run("SELECT state, COUNT(*) FROM jobs GROUP BY state", {},
          [&](const SqlRow& r) { out[r.text(0)] = static_cast<int>(r.integer(1)); });
  return out;
}

}  // namespace maxcode::bot::service
