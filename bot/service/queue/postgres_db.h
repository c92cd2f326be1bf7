// The PostgreSQL engine of the service's store (sql_database.h), over libpq: the store
// two or more `maxcode serve` replicas share. One connection per object (libpq's
// connections are not for two threads at once); a connection the server dropped is
// opened again before the next statement outside a transaction, so a restarted
// PostgreSQL costs the statements in flight, not the service.
#pragma once

#include <string>

#include "bot/service/queue/sql_database.h"

struct pg_conn;

namespace maxcode::bot::service {

class PostgresDb : public SqlDatabase {
 public:
  // `url`: postgresql://[user@]host[:port]/database[?...]; `password` (from the
  // environment, may be empty) overrides one in the URL. Throws StoreError naming
  // `setting` and the URL (without its password) when the server cannot be reached or
  // refuses.
  PostgresDb(const std::string& url, const std::string& password, const std::string& setting);
  ~PostgresDb() override;
  PostgresDb(const PostgresDb&) = delete;
  PostgresDb& operator=(const PostgresDb&) = delete;

  SqlDialect dialect() const override { return SqlDialect::kPostgres; }
  void exec(const std::string& sql) override;
  int run(const std::string& sql, const std::vector<SqlValue>& values = {},
          const std::function<void(const SqlRow&)>& on_row = nullptr) override;
  void begin() override;
  void commit() override;
  void rollback() override;
  void serialize(const std::string& name) override;
  std::string lock_rows_skip_locked() const override { return " FOR UPDATE SKIP LOCKED"; }
  std::string auto_id_column(const std::string& name) const override;
  void add_column_if_missing(const std::string& table, const std::string& column,
                             const std::string& declaration) override;
  std::string describe() override;

 private:
  void reconnect_if_dropped();
  pg_conn* conn_ = nullptr;
  std::string shown_url_;  // the URL with its password hidden, for messages
  bool in_transaction_ = false;
};

// `?1`, `?2`, ... -> `$1`, `$2`, ... outside quoted literals and identifiers: the store's
// SQL is written once with SQLite's numbered placeholders, which PostgreSQL spells `$N`.
std::string postgres_placeholders(const std::string& sql);

// `url` with the password of its user-info part (postgresql://user:PASSWORD@host) and of
// a password= parameter replaced by ***.
std::string hide_password(const std::string& url);

}  // namespace maxcode::bot::service
