#include "bot/service/app/github_retry.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "bot/github/git_remote.h"
#include "bot/github/github_client.h"
#include "bot/service/service_context.h"

namespace maxcode::bot::service {

namespace {

std::string seconds_text(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f s", s);
  return text;
}

}  // namespace

RetryAdvice advise_retry(const std::exception& e, int tries, double now_s, const RetryLimits& limits) {
  RetryAdvice a;
  const double backoff = limits.backoff_s * std::pow(2.0, std::max(tries, 1) - 1);
  const auto* error = dynamic_cast<const Error*>(&e);
  const GithubError* g = find_error<GithubError>(e);
  if (g) a.status = std::to_string(g->status);
  if (!error || !error->retryable()) {  // the error says it will fail the same way again
    a.why = g ? "GitHub answered " + a.status : "not a GitHub failure";
    return a;
  }
  // Retryable: how long to wait, as GitHub's headers ask, else backing off.
  if (!g) {  // a fetch or push that failed (GitError): the network, a 5xx
    a = find_error<GitError>(e) ? RetryAdvice{true, backoff, "git", "git failed"}
                                : RetryAdvice{true, backoff, "error", "retryable error"};
  } else {
    const RateLimit limit = g->rate_limit();  // GitHub's rules: bot/github/rate_limit.h
    if (limit.limited())
      a = {true, limit.wait_s(now_s, std::max(limits.secondary_wait_s, backoff)), a.status, limit.why()};
    else  // no answer, or a 5xx
      a = {true, backoff, a.status, g->status == 0 ? "no answer" : "server error " + a.status};
  }
  if (a.retry && a.wait_s > limits.max_wait_s) {
    a.why += " (asked " + seconds_text(a.wait_s) + ", capped)";
    a.wait_s = limits.max_wait_s;
  }
  return a;
}

// --- the store ---------------------------------------------------------------------------

DeferredWork::DeferredWork(const std::filesystem::path& db_file, std::function<double()> now)
    : DeferredWork(open_sql_database(db_file.string(), "", "db"), std::move(now)) {}

DeferredWork::DeferredWork(std::unique_ptr<SqlDatabase> store, std::function<double()> now)
    : now_(std::move(now)), db_(std::move(store)) {
  SqlTransaction tx(*db_);
  db_->serialize("maxcode schema");  // replicas starting at once (job_queue.cc says why)
  db_->exec(R"sql(
CREATE TABLE IF NOT EXISTS github_deferred(
  action TEXT NOT NULL, key TEXT NOT NULL, tries BIGINT NOT NULL DEFAULT 0,
  not_before DOUBLE PRECISION NOT NULL DEFAULT 0, error TEXT NOT NULL DEFAULT '', created_at DOUBLE PRECISION NOT NULL,
  PRIMARY KEY(action, key));
)sql");
  // held_until: take_due's hold, apart from not_before (GitHub's wait), which
  // report_job reads as "GitHub asked for time".
  db_->add_column_if_missing("github_deferred", "held_until", "DOUBLE PRECISION NOT NULL DEFAULT 0");
  tx.commit();
}

void DeferredWork::add(const std::string& action, const std::string& key) {
  std::lock_guard lock(mutex_);
  db_->run("INSERT INTO github_deferred(action, key, created_at) VALUES(?1, ?2, ?3) ON CONFLICT(action, key) DO NOTHING", {action, key, now_()});
}

int DeferredWork::failed(const std::string& action, const std::string& key, double wait_s, const std::string& error) {
  std::lock_guard lock(mutex_);
  const double now = now_();
  db_->run("INSERT INTO github_deferred(action, key, tries, not_before, error, created_at) VALUES(?1, ?2, 1, ?3, ?4, ?5) "
          "ON CONFLICT(action, key) DO UPDATE SET tries = github_deferred.tries + 1, not_before = ?3, error = ?4, held_until = 0",
          {action, key, now + wait_s, error, now});
  int tries = 0;
  db_->run("SELECT tries FROM github_deferred WHERE action = ?1 AND key = ?2", {action, key},
          [&](const SqlRow& r) { tries = static_cast<int>(r.integer(0)); });
  return tries;
}

void DeferredWork::remove(const std::string& action, const std::string& key) {
  std::lock_guard lock(mutex_);
  db_->run("DELETE FROM github_deferred WHERE action = ?1 AND key = ?2", {action, key});
}

std::optional<DeferredWork::Item> DeferredWork::find(const std::string& action, const std::string& key) {
  std::lock_guard lock(mutex_);
  std::optional<Item> item;
  db_->run("SELECT tries, not_before, error FROM github_deferred WHERE action = ?1 AND key = ?2", {action, key},
          [&](const SqlRow& r) { item = Item{action, key, static_cast<int>(r.integer(0)), r.real(1), r.text(2)}; });
  return item;
}

bool DeferredWork::waiting(const std::string& action, const std::string& key) {
  const auto item = find(action, key);
  return item && item->not_before > now_();
}

int DeferredWork::tries(const std::string& action, const std::string& key) {
  const auto item = find(action, key);
  return item ? item->tries : 0;
}

std::vector<DeferredWork::Item> DeferredWork::due(const std::string& action, int limit) {
  std::lock_guard lock(mutex_);
  std::vector<Item> items;
  db_->run("SELECT key, tries, not_before, error FROM github_deferred WHERE action = ?1 AND not_before <= ?2 "
          "ORDER BY not_before, created_at LIMIT ?3",
          {action, now_(), std::int64_t{limit}}, [&](const SqlRow& r) {
            items.push_back({action, r.text(0), static_cast<int>(r.integer(1)), r.real(2), r.text(3)});
          });
  return items;
}

std::vector<DeferredWork::Item> DeferredWork::take_due(const std::string& action, double hold_s, int limit) {
  std::lock_guard lock(mutex_);
  SqlTransaction tx(*db_);
  const double now = now_();
  std::vector<Item> items;
  db_->run("SELECT key, tries, not_before, error FROM github_deferred WHERE action = ?1 AND not_before <= ?2 "
           "AND held_until <= ?2 ORDER BY not_before, created_at LIMIT ?3" + db_->lock_rows_skip_locked(),
           {action, now, std::int64_t{limit}}, [&](const SqlRow& r) {
             items.push_back({action, r.text(0), static_cast<int>(r.integer(1)), r.real(2), r.text(3)});
           });
  for (const Item& item : items)
    db_->run("UPDATE github_deferred SET held_until = ?3 WHERE action = ?1 AND key = ?2", {action, item.key, now + hold_s});
  tx.commit();
  return items;
}

// --- the service's use of it ---------------------------------------------------------------

RetryLimits retry_limits(const ServiceContext& context) {
  RetryLimits limits;
  limits.max_wait_s = context.config.max_retry_wait_s;
  limits.max_tries = context.config.max_tries;
  limits.backoff_s = context.config.backoff_s;
  return limits;
}

void note_deferral(ServiceContext& context, const std::string& action, const std::string& key,
                   const RetryAdvice& advice, int tries, const std::string& error) {
  context.metrics.count("maxcode_github_deferred_total", "GitHub work deferred (rate limits, server errors), by action and status",
                        {{"action", action}, {"status", advice.status}});
  context.log("github", action + " " + key + ": deferred " + seconds_text(advice.wait_s) + " (" + advice.why + "; try " +
                            std::to_string(tries) + " of " + std::to_string(retry_limits(context).max_tries) + "): " + error);
}

void note_gave_up(ServiceContext& context, const std::string& action, const std::string& key, int tries,
                  const std::string& error) {
  context.metrics.count("maxcode_github_gave_up_total", "GitHub work given up after github.max_tries", {{"action", action}});
  context.log("github", action + " " + key + ": GIVEN UP after " + std::to_string(tries) + " tries; last error: " + error);
}

bool defer_after_failure(ServiceContext& context, const std::string& action, const std::string& key,
                         const std::exception& e) {
  const RetryLimits limits = retry_limits(context);
  const RetryAdvice advice = advise_retry(e, (context.deferred ? context.deferred->tries(action, key) : 0) + 1,
                                          context.queue.now(), limits);
  if (!advice.retry || !context.deferred) {
    if (context.deferred) context.deferred->remove(action, key);
    return false;
  }
  const int tries = context.deferred->failed(action, key, advice.wait_s, e.what());
  if (tries >= limits.max_tries) {
    context.deferred->remove(action, key);
    note_gave_up(context, action, key, tries, e.what());
    return false;
  }
  note_deferral(context, action, key, advice, tries, e.what());
  return true;
}

}  // namespace maxcode::bot::service
