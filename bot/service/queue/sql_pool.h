// A few connections to one store, each used by one thread at a time. The service's
// HTTP threads (webhook intake, runners) and its workers all go through one JobQueue:
// with one connection they wait in line for each other's round trips to the server,
// which held two PostgreSQL replicas to ~600 webhooks/s where one SQLite file (calls
// in-process, microseconds) held 1,000. SQLite keeps one connection: its writers take
// the file one at a time anyway.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "bot/service/queue/sql_database.h"

namespace maxcode::bot::service {

class SqlPool {
 public:
  using Opener = std::function<std::unique_ptr<SqlDatabase>()>;
  // `first` is the pool's first connection; `open` makes more when every connection is
  // in use, up to `size` (no `open`: `first` alone).
  SqlPool(std::unique_ptr<SqlDatabase> first, Opener open = nullptr, int size = 1);

  // One connection, this thread's until the handle goes out of scope.
  class Handle {
   public:
    Handle(SqlPool& pool, std::unique_ptr<SqlDatabase> db) : pool_(pool), db_(std::move(db)) {}
    ~Handle() { pool_.give_back(std::move(db_)); }
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    SqlDatabase* operator->() const { return db_.get(); }
    SqlDatabase& operator*() const { return *db_; }

   private:
    SqlPool& pool_;
    std::unique_ptr<SqlDatabase> db_;
  };
  Handle acquire();

 private:
  void give_back(std::unique_ptr<SqlDatabase> db);
  Opener open_;
  int size_, opened_ = 1;
  std::mutex mutex_;
  std::condition_variable returned_;
  std::vector<std::unique_ptr<SqlDatabase>> idle_;
};

}  // namespace maxcode::bot::service
