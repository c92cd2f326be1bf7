// The seam between the service's store and the database engine behind it: SQLite (one
// file, the embedded default, one `maxcode serve` process) or PostgreSQL (a server that
// two or more `maxcode serve` replicas share, so that one may die; docs/service.md).
// The store's SQL (job_queue.cc, github_retry.cc) is written once, in the common part of
// the two dialects: `?1`-style placeholders (the PostgreSQL side renumbers them as `$1`),
// `ON CONFLICT ... DO NOTHING | DO UPDATE`, `RETURNING`, BIGINT and DOUBLE PRECISION
// columns. What cannot be written once is a method here, answered by each engine:
// the auto-numbered id column, how a transaction starts, a lock between processes,
// skipping rows another transaction holds, adding a column to an old store.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "runner/util/error.h"

namespace maxcode::bot::service {

using SqlValue = std::variant<std::nullptr_t, std::int64_t, double, std::string>;

// The store cannot be opened or reached; the message names the setting (`store` or
// `db`) and what the engine said.
class StoreError : public Error {
 public:
  using Error::Error;
};

// One result row, valid only inside the `on_row` callback that receives it.
class SqlRow {
 public:
  virtual ~SqlRow() = default;
  virtual std::string text(int column) const = 0;
  virtual std::int64_t integer(int column) const = 0;
  virtual double real(int column) const = 0;
  virtual bool is_null(int column) const = 0;
};

enum class SqlDialect { kSqlite, kPostgres };

// One connection. Not for use from two threads at once (JobQueue and DeferredWork hold
// a mutex around it). Errors throw std::runtime_error with the engine's message and the
// statement.
class SqlDatabase {
 public:
  virtual ~SqlDatabase() = default;
  virtual SqlDialect dialect() const = 0;
  // One or more statements, no values.
  virtual void exec(const std::string& sql) = 0;
  /// Runs `sql` with `values` bound to ?1, ?2, ...; calls `on_row` per result row.
  /// Returns the number of rows changed (inserted, updated, deleted).
  virtual int run(const std::string& sql, const std::vector<SqlValue>& values = {},
                  const std::function<void(const SqlRow&)>& on_row = nullptr) = 0;
  // Runs an INSERT that ends in `RETURNING id`; 0 when it inserted nothing (a conflict
  // that said DO NOTHING).
  std::int64_t insert_returning_id(const std::string& sql, const std::vector<SqlValue>& values);

  // A transaction that writes: SQLite takes the file's write lock at once (BEGIN
  // IMMEDIATE, so that two writers never deadlock upgrading a read lock); PostgreSQL
  // starts a READ COMMITTED one and locks rows as statements touch them.
  virtual void begin() = 0;
  virtual void commit() = 0;
  virtual void rollback() = 0;
  /// Inside a transaction: waits until no other process holds `name`, and holds it to
  /// the end of the transaction. For rules about rows that do not exist yet or about
  /// sets of rows (one running job per repository), which row locks cannot express.
  /// SQLite: nothing to do, its transaction already holds the whole file.
  virtual void serialize(const std::string& name) = 0;
  /// Appended to a SELECT inside a transaction: the rows it returns are locked until the
  /// end of the transaction, and rows another transaction holds are passed over instead
  /// of waited for (PostgreSQL's FOR UPDATE SKIP LOCKED). SQLite: empty (one writer).
  virtual std::string lock_rows_skip_locked() const = 0;
  // The declaration of an auto-numbered BIGINT primary key named `name`.
  virtual std::string auto_id_column(const std::string& name) const = 0;
  // Adds `column` (with its declaration) to `table` unless an older store lacks it.
  virtual void add_column_if_missing(const std::string& table, const std::string& column,
                                     const std::string& declaration) = 0;
  // For the log line at start: the engine and where (never a password).
  virtual std::string describe() = 0;
};

// Commits at scope exit unless an exception is in flight (then rolls back).
class SqlTransaction {
 public:
  explicit SqlTransaction(SqlDatabase& db);
  ~SqlTransaction();
  SqlTransaction(const SqlTransaction&) = delete;
  SqlTransaction& operator=(const SqlTransaction&) = delete;
  void commit();

 private:
  SqlDatabase& db_;
  bool done_ = false;
};

// True when `store` is a PostgreSQL connection URL (postgresql:// or postgres://).
bool is_postgres_url(const std::string& store);

/// Opens the store the `store` setting names: a PostgreSQL URL, else an SQLite file
/// (created if missing). `password` (PostgreSQL only; empty = none or in the URL) comes
/// from the environment, read by the CLI. `setting` names the setting in errors.
/// Throws StoreError when it cannot be opened or reached.
std::unique_ptr<SqlDatabase> open_sql_database(const std::string& store, const std::string& password = "",
                                               const std::string& setting = "store");

}  // namespace maxcode::bot::service
