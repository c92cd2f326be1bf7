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

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ",") + w;
  return out;
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string w; std::getline(in, w, ',');)
    if (!w.empty()) out.push_back(w);
  return out;
}

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
  j.labels = split(r.text(10));
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

// --- deliveries -----------------------------------------------------------------------

JobQueue::Recorded JobQueue::record_delivery(const std::string& id, const std::string& event, const std::string& payload) {
  using Kind = Recorded::Kind;
  auto db = pool_.acquire();
  const std::string hash = sha256_hex(payload);
  // No transaction: each statement below is right on its own against another replica
  // (the guarded UPDATE, the INSERT's ON CONFLICT), and this is the webhook's hot path.
  std::optional<std::string> state;
  if (db->dialect() == SqlDialect::kPostgres) {
    // The same three steps (known id? a replay? store it) as one statement: a round trip
    // to the server each cost the webhook's answer time (SQLite, in-process, cannot put
    // an INSERT inside WITH and has no round trips to save). Casts: an untyped value
    // in INSERT ... SELECT would be text.
    std::string first;
    int inserted = 0;
    db->run("WITH prior AS (SELECT state FROM deliveries WHERE id = ?1), "
            "replay AS (SELECT id FROM deliveries WHERE body_sha256 = ?5 AND received_at >= ?6::double precision "
            "AND NOT EXISTS (SELECT 1 FROM prior) ORDER BY received_at LIMIT 1), "
            "stored AS (INSERT INTO deliveries(id, event, received_at, payload, body_sha256) "
            "SELECT ?1::text, ?2::text, ?3::double precision, ?4::text, ?5::text "
            "WHERE NOT EXISTS (SELECT 1 FROM prior) AND NOT EXISTS (SELECT 1 FROM replay) "
            "ON CONFLICT(id) DO NOTHING RETURNING id) "
            "SELECT (SELECT state FROM prior), (SELECT id FROM replay), (SELECT COUNT(*) FROM stored)",
            {id, event, now(), payload, hash, now() - options_.replay_window_s}, [&](const SqlRow& r) {
              if (!r.is_null(0)) state = r.text(0);
              if (!r.is_null(1)) first = r.text(1);
              inserted = static_cast<int>(r.integer(2));
            });
    if (inserted == 1) return {Kind::kStored, ""};
    if (!state && !first.empty()) return {Kind::kReplayed, first};
    if (!state) return {Kind::kDuplicate, "received"};  // another replica stored it just now
  } else {
    db->run("SELECT state FROM deliveries WHERE id = ?1", {id}, [&](const SqlRow& r) { state = r.text(0); });
  }
  if (state == "failed") {
    // Redelivered after it failed (given up, or an error): handled again, from the start.
    // The state in the WHERE: of two replicas given the redelivery at once, one retries.
    if (db->run("UPDATE deliveries SET state = 'received', payload = ?2, body_sha256 = ?3, attempts = 0, retry_at = 0, "
                 "lease_expires = 0, note = 'redelivered after: ' || note WHERE id = ?1 AND state = 'failed'",
                 {id, payload, hash}) == 1)
      return {Kind::kRetried, "failed"};
    return {Kind::kDuplicate, "received"};
  }
  if (state) return {Kind::kDuplicate, *state};
  std::string first;
  db->run("SELECT id FROM deliveries WHERE body_sha256 = ?1 AND received_at >= ?2 ORDER BY received_at LIMIT 1",
           {hash, now() - options_.replay_window_s}, [&](const SqlRow& r) { first = r.text(0); });
  if (!first.empty()) return {Kind::kReplayed, first};
  // DO NOTHING: another replica may store the same id between the SELECT and here.
  if (db->run("INSERT INTO deliveries(id, event, received_at, payload, body_sha256) VALUES(?1, ?2, ?3, ?4, ?5) "
               "ON CONFLICT(id) DO NOTHING",
               {id, event, now(), payload, hash}) == 0)
    return {Kind::kDuplicate, "received"};
  return {Kind::kStored, ""};
}

std::vector<Delivery> JobQueue::pending_deliveries(int limit) {
  auto db = pool_.acquire();
  std::vector<Delivery> out;
  db->run("SELECT id, event, payload, received_at FROM deliveries WHERE state = 'received' AND retry_at <= ?2 "
           "ORDER BY received_at, id LIMIT ?1",
           {std::int64_t{limit}, now()}, [&](const SqlRow& r) { out.push_back({r.text(0), r.text(1), r.text(2), r.real(3)}); });
  return out;
}

std::vector<Delivery> JobQueue::take_deliveries(int limit) {
  auto db = pool_.acquire();
  const double t = now();
  std::vector<Delivery> out;
  // One statement (a round trip to the server, not one per delivery): the rows the
  // subquery picks are locked, those another replica holds passed over.
  db->run("UPDATE deliveries SET lease_expires = ?3 WHERE id IN (SELECT id FROM deliveries WHERE state = 'received' "
          "AND retry_at <= ?2 AND lease_expires <= ?2 ORDER BY received_at, id LIMIT ?1" + db->lock_rows_skip_locked() +
          ") RETURNING id, event, payload, received_at",
          {std::int64_t{limit}, t, t + options_.work_lease_s},
          [&](const SqlRow& r) { out.push_back({r.text(0), r.text(1), r.text(2), r.real(3)}); });
  // RETURNING keeps no order.
  std::sort(out.begin(), out.end(),
            [](const Delivery& x, const Delivery& y) { return std::tie(x.received_at, x.id) < std::tie(y.received_at, y.id); });
  return out;
}

void JobQueue::finish_delivery(const std::string& id, const std::string& state, const std::string& note) {
  auto db = pool_.acquire();
  // The payload is kept only until handled: it may be 25 MB and says nothing later.
  db->run("UPDATE deliveries SET state = ?2, note = ?3, payload = '', lease_expires = 0 WHERE id = ?1", {id, state, note});
}

int JobQueue::delivery_attempts(const std::string& id) {
  auto db = pool_.acquire();
  int attempts = 0;
  db->run("SELECT attempts FROM deliveries WHERE id = ?1", {id}, [&](const SqlRow& r) { attempts = static_cast<int>(r.integer(0)); });
  return attempts;
}

bool JobQueue::defer_delivery(const std::string& id, const std::string& error, int max_attempts, double wait_s) {
  auto db = pool_.acquire();
  int attempts = 0;
  db->run("SELECT attempts FROM deliveries WHERE id = ?1", {id}, [&](const SqlRow& r) { attempts = static_cast<int>(r.integer(0)) + 1; });
  if (attempts >= max_attempts) {
    db->run("UPDATE deliveries SET state = 'failed', note = ?2, attempts = ?3, payload = '', lease_expires = 0 WHERE id = ?1",
            {id, error, std::int64_t{attempts}});
    return false;
  }
  db->run("UPDATE deliveries SET note = ?2, attempts = ?3, retry_at = ?4, lease_expires = 0 WHERE id = ?1",
          {id, error, std::int64_t{attempts}, now() + wait_s});
  return true;
}

std::int64_t JobQueue::delivery_count() {
  auto db = pool_.acquire();
  std::int64_t n = 0;
  db->run("SELECT COUNT(*) FROM deliveries", {}, [&](const SqlRow& r) { n = r.integer(0); });
  return n;
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
      "requested_by, labels, state, max_attempts, created_at) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'queued', ?11, ?12) "
      "ON CONFLICT(key) DO NOTHING",
      {key, s.repo, s.installation_id, s.commit, s.target, s.trigger, s.policy, s.issue_number, s.requested_by,
       join(s.labels), std::int64_t{options_.max_attempts}, now()});
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

std::optional<std::string> JobQueue::take_results(std::int64_t id) {
  auto db = pool_.acquire();
  const double t = now();
  const std::string lease = random_hex(16);
  // One statement: the row lock makes two replicas' takes one after the other, and the
  // second finds the lease held.
  if (db->run("UPDATE jobs SET lease = ?2, lease_expires = ?3 WHERE id = ?1 AND state = 'delivering' "
               "AND (lease = '' OR lease_expires < ?4)",
               {id, lease, t + options_.work_lease_s, t}) != 1)
    return std::nullopt;
  return lease;
}

bool JobQueue::take_report(std::int64_t id) {
  auto db = pool_.acquire();
  const double t = now();
  return db->run("UPDATE jobs SET report_until = ?2 WHERE id = ?1 AND report_until <= ?3",
                  {id, t + options_.work_lease_s, t}) == 1;
}

void JobQueue::end_report(std::int64_t id) {
  auto db = pool_.acquire();
  db->run("UPDATE jobs SET report_until = 0 WHERE id = ?1", {id});
}

void JobQueue::release_results(std::int64_t id, const std::string& lease) {
  auto db = pool_.acquire();
  db->run("UPDATE jobs SET lease = '', lease_expires = 0 WHERE id = ?1 AND state = 'delivering' AND lease = ?2", {id, lease});
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

// --- runners, installations, ignored targets, schedules ------------------------------------

void JobQueue::runner_seen(const std::string& name, const std::vector<std::string>& labels, std::int64_t job_id) {
  auto db = pool_.acquire();
  db->run("INSERT INTO runners(name, labels, last_seen, job_id) VALUES(?1, ?2, ?3, ?4) "
          "ON CONFLICT(name) DO UPDATE SET labels = ?2, last_seen = ?3, job_id = ?4",
          {name, join(labels), now(), job_id});
}

void JobQueue::runner_alive(const std::string& name, std::int64_t job_id) {
  auto db = pool_.acquire();
  db->run("UPDATE runners SET last_seen = ?2, job_id = ?3 WHERE name = ?1", {name, now(), job_id});
}

std::vector<RunnerInfo> JobQueue::runners() {
  auto db = pool_.acquire();
  std::vector<RunnerInfo> out;
  db->run("SELECT name, labels, last_seen, job_id FROM runners ORDER BY name", {},
          [&](const SqlRow& r) { out.push_back({r.text(0), split(r.text(1)), r.real(2), r.integer(3)}); });
  return out;
}

void JobQueue::set_installation(const std::string& id, const std::string& account, const std::string& state,
                                const json& repos) {
  auto db = pool_.acquire();
  db->run("INSERT INTO installations(id, account, state, repos, updated_at) VALUES(?1, ?2, ?3, ?4, ?5) "
          "ON CONFLICT(id) DO UPDATE SET account = ?2, state = ?3, repos = CASE WHEN ?4 = 'null' THEN installations.repos ELSE ?4 END, "
          "updated_at = ?5",
          {id, account, state, dump_json(repos), now()});
  if (state == "deleted" || state == "suspended") {
    // Nothing may run for an installation that is gone or suspended.
    db->run("UPDATE jobs SET state = 'cancelled', outcome = 'cancelled', summary = ?2, finished_at = ?3 "
            "WHERE installation_id = ?1 AND state = 'queued'",
            {id, "the App installation was " + state, now()});
  }
}

void JobQueue::add_installation_repos(const std::string& id, const json& added, const json& removed) {
  auto db = pool_.acquire();
  SqlTransaction tx(*db);
  // Read, change and write back the list: two replicas handling two events of one
  // installation must not each write their own change over the other's.
  db->serialize("maxcode installation " + id);
  json repos = json::array();
  db->run("SELECT repos FROM installations WHERE id = ?1", {id}, [&](const SqlRow& r) {
    repos = json::parse(r.text(0), nullptr, false);
    if (!repos.is_array()) repos = json::array();
  });
  json next = json::array();
  for (const auto& r : repos)
    if (std::find(removed.begin(), removed.end(), r) == removed.end()) next.push_back(r);
  for (const auto& r : added)
    if (std::find(next.begin(), next.end(), r) == next.end()) next.push_back(r);
  db->run("INSERT INTO installations(id, account, state, repos, updated_at) VALUES(?1, '', 'active', ?2, ?3) "
          "ON CONFLICT(id) DO UPDATE SET repos = ?2, updated_at = ?3",
          {id, dump_json(next), now()});
  for (const auto& r : removed)
    if (r.is_string())
      db->run("UPDATE jobs SET state = 'cancelled', outcome = 'cancelled', summary = 'the repository was removed from "
              "the App installation', finished_at = ?3 WHERE installation_id = ?1 AND repo = ?2 AND state = 'queued'",
              {id, r.get<std::string>(), now()});
  tx.commit();
}

std::optional<std::string> JobQueue::installation_state(const std::string& id) {
  auto db = pool_.acquire();
  std::optional<std::string> state;
  db->run("SELECT state FROM installations WHERE id = ?1", {id}, [&](const SqlRow& r) { state = r.text(0); });
  return state;
}

std::vector<std::string> JobQueue::installation_repos(const std::string& id) {
  auto db = pool_.acquire();
  std::vector<std::string> out;
  db->run("SELECT repos FROM installations WHERE id = ?1 AND state = 'active'", {id}, [&](const SqlRow& r) {
    const json repos = json::parse(r.text(0), nullptr, false);
    if (repos.is_array())
      for (const auto& name : repos)
        if (name.is_string()) out.push_back(name);
  });
  return out;
}

std::optional<std::string> JobQueue::installation_for(const std::string& repo) {
  auto db = pool_.acquire();
  std::optional<std::string> found;
  db->run("SELECT id, repos FROM installations WHERE state = 'active' ORDER BY updated_at DESC", {}, [&](const SqlRow& r) {
    const json repos = json::parse(r.text(1), nullptr, false);
    if (!found && repos.is_array() && std::find(repos.begin(), repos.end(), json(repo)) != repos.end()) found = r.text(0);
  });
  return found;
}

void JobQueue::ignore_target(const std::string& repo, const std::string& branch, const std::string& head_sha) {
  auto db = pool_.acquire();
  db->run("INSERT INTO ignored_targets(repo, branch, head_sha, at) VALUES(?1, ?2, ?3, ?4) "
           "ON CONFLICT(repo, branch) DO UPDATE SET head_sha = ?3, at = ?4",
          {repo, branch, head_sha, now()});
}

bool JobQueue::is_ignored(const std::string& repo, const std::string& branch) {
  auto db = pool_.acquire();
  bool found = false;
  db->run("SELECT 1 FROM ignored_targets WHERE repo = ?1 AND branch = ?2", {repo, branch},
          [&](const SqlRow&) { found = true; });
  return found;
}

std::optional<double> JobQueue::schedule_last_run(const std::string& name) {
  auto db = pool_.acquire();
  std::optional<double> at;
  db->run("SELECT last_run FROM schedule_runs WHERE name = ?1", {name}, [&](const SqlRow& r) { at = r.real(0); });
  return at;
}

void JobQueue::set_schedule_run(const std::string& name, double at) {
  auto db = pool_.acquire();
  db->run("INSERT INTO schedule_runs(name, last_run) VALUES(?1, ?2) "
           "ON CONFLICT(name) DO UPDATE SET last_run = ?2, taken_until = 0",
           {name, at});
}

bool JobQueue::take_schedule_run(const std::string& name, double last_run) {
  auto db = pool_.acquire();
  const double t = now();
  // last_run in the WHERE: a replica that read it before another ran the sweep finds it
  // changed; taken_until: one running it now holds it.
  return db->run("UPDATE schedule_runs SET taken_until = ?3 WHERE name = ?1 AND last_run = ?2 AND taken_until <= ?4",
                  {name, last_run, t + options_.work_lease_s, t}) == 1;
}

}  // namespace maxcode::bot::service
