// The SQLite engine of the service's store (sql_database.h): one file in WAL mode, run
// statements with bound values, read rows. Errors throw with SQLite's message and the
// statement, so a log line says what failed. One process owns the file (a second one
// only while a restarted service waits for the old one to exit).
#pragma once

#include <filesystem>
#include <string>

#include "bot/service/queue/sql_database.h"

struct sqlite3;

namespace maxcode::bot::service {

class SqliteDb : public SqlDatabase {
 public:
  // Opens (creating) `file` in WAL mode with a busy timeout, so that a second process
  // (a restarted service while the old one exits) waits instead of failing.
  explicit SqliteDb(const std::filesystem::path& file);
  ~SqliteDb() override;
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  SqlDialect dialect() const override { return SqlDialect::kSqlite; }
  void exec(const std::string& sql) override;
  int run(const std::string& sql, const std::vector<SqlValue>& values = {},
          const std::function<void(const SqlRow&)>& on_row = nullptr) override;
  void begin() override { exec("BEGIN IMMEDIATE"); }
  void commit() override { exec("COMMIT"); }
  void rollback() override { exec("ROLLBACK"); }
  void serialize(const std::string&) override {}
  std::string lock_rows_skip_locked() const override { return ""; }
  std::string auto_id_column(const std::string& name) const override;
  void add_column_if_missing(const std::string& table, const std::string& column,
                             const std::string& declaration) override;
  std::string describe() override;
  std::int64_t last_insert_id() const;
  std::string journal_mode();

 private:
  sqlite3* db_ = nullptr;
  std::filesystem::path file_;
};

}  // namespace maxcode::bot::service
