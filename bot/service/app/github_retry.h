// When GitHub says "not now" (403/429 with `retry-after`, an exhausted primary limit
// with `x-ratelimit-remaining: 0` and `x-ratelimit-reset`, a 5xx, no answer), the
// service does not sleep on a worker thread: the work is deferred in the store and
// tried again when GitHub said it may be, so a restart in between loses nothing and the
// other work goes on. GitHub's rate-limit rules:
// https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api
//
// A piece of work is an (action, key) pair: ("event", delivery id) is kept in the
// deliveries table (DeliveryLog::defer); ("deliver", job), ("report", job) and
// ("regressions", job) are kept here. Each try that fails for a reason that may pass
// waits as GitHub asked (at most `max_wait_s`); after `max_tries` the work is given up
// with a log line that says what and why. Work that is redone is idempotent by
// construction (a PR per branch, comments and issues found again by their markers), so
// a retry never duplicates anything.
#pragma once

#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bot/service/queue/sql_database.h"

namespace maxcode::bot::service {

struct RetryLimits {
  double max_wait_s = 900;  // github.max_retry_wait_s: a longer wait asked for is cut to this
  int max_tries = 8;        // github.max_tries: then the work is given up
  double backoff_s = 30;    // 5xx / no answer: the first wait, doubling per try
  // GitHub: "wait at least one minute" after a secondary limit without retry-after.
  double secondary_wait_s = 60;
};

struct RetryAdvice {
  bool retry = false;   // the failure may pass: defer and try again
  double wait_s = 0;    // how long, as GitHub asked (capped at max_wait_s)
  std::string status;   // for the metric: "429", "403", "502", "0" (no answer), "git"
  std::string why;      // one phrase for the log line
};

// What to do after the `tries`-th failed try (1-based) with error `e`, at `now_s`
// (seconds since the epoch). Retried when the error says it is retryable (Error::retryable:
// GithubError by GitHub's rate-limit rules, GitError always); a 403 that is not a rate
// limit (a permission), a 404 or a 422 is not. The wait follows GitHub's headers.
RetryAdvice advise_retry(const std::exception& e, int tries, double now_s, const RetryLimits& limits);

// The deferred work, durable in the service's store (table `github_deferred`, its own
// connection to the same SQLite file or PostgreSQL database; sql_database.h).
class DeferredWork {
 public:
  struct Item {
    std::string action, key;
    int tries = 0;            // failed tries so far
    double not_before = 0;    // seconds since the epoch
    std::string error;        // the last failure
  };

  DeferredWork(const std::filesystem::path& db_file, std::function<double()> now);
  DeferredWork(std::unique_ptr<SqlDatabase> store, std::function<double()> now);

  // Work to do as soon as possible (no try failed yet): durable before it is attempted,
  // so a crash before it is done leaves it to be done.
  void add(const std::string& action, const std::string& key);
  // A try failed: the item waits `wait_s`. Returns the tries so far.
  int failed(const std::string& action, const std::string& key, double wait_s, const std::string& error);
  // Done, or given up: forgotten.
  void remove(const std::string& action, const std::string& key);
  std::optional<Item> find(const std::string& action, const std::string& key);
  // True while the item waits (GitHub asked for time): do not try it before then.
  bool waiting(const std::string& action, const std::string& key);
  // Items of `action` whose time has come, oldest first.
  std::vector<Item> due(const std::string& action, int limit = 50);
  // Like due(), and each item returned is held for `hold_s` (apart from its not_before,
  // which waiting() reads) before any replica takes it again: the caller does it now (then remove() or failed()), and replicas sharing
  // the store do not do it twice; one that dies meanwhile leaves it to another.
  std::vector<Item> take_due(const std::string& action, double hold_s, int limit = 50);
  int tries(const std::string& action, const std::string& key);

 private:
  std::function<double()> now_;
  std::mutex mutex_;
  std::unique_ptr<SqlDatabase> db_;
};

struct ServiceContext;

// The limits the service config sets (github.max_retry_wait_s, github.max_tries,
// queue.backoff_s).
RetryLimits retry_limits(const ServiceContext& context);

// After a failed try of (action, key): true when it is deferred (counted in
// maxcode_github_deferred_total{action,status}, logged with the wait); false when it
// is not to be retried: the error does not pass, or the tries are spent (then logged as
// given up and counted in maxcode_github_gave_up_total{action}). Either way the caller
// learns whether to stop for now or to record the failure for good.
bool defer_after_failure(ServiceContext& context, const std::string& action, const std::string& key,
                         const std::exception& e);

// Counts and logs one deferral (the "event" action keeps its own tries in the
// deliveries table and calls this itself).
void note_deferral(ServiceContext& context, const std::string& action, const std::string& key,
                   const RetryAdvice& advice, int tries, const std::string& error);
void note_gave_up(ServiceContext& context, const std::string& action, const std::string& key, int tries,
                  const std::string& error);

}  // namespace maxcode::bot::service
