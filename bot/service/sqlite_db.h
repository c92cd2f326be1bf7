// A thin RAII layer over one SQLite connection for the service's store: open in WAL
// mode, run statements with bound values, read rows. Errors throw with SQLite's message
// and the statement, so a log line says what failed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace maxcode::bot::service {

using SqlValue = std::variant<std::nullptr_t, std::int64_t, double, std::string>;

class SqlRow {
 public:
  explicit SqlRow(sqlite3_stmt* stmt) : stmt_(stmt) {}
  std::string text(int column) const;
  std::int64_t integer(int column) const;
  double real(int column) const;
  bool is_null(int column) const;

 private:
  sqlite3_stmt* stmt_;
};

class SqliteDb {
 public:
  // Opens (creating) `file` in WAL mode with a busy timeout, so that a second process
  // (a restarted service while the old one exits) waits instead of failing.
  explicit SqliteDb(const std::filesystem::path& file);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  void exec(const std::string& sql);  // one or more statements, no values
  // Runs `sql` with `values` bound to ?1, ?2, ...; calls `on_row` per result row.
  // Returns the number of rows changed.
  int run(const std::string& sql, const std::vector<SqlValue>& values = {},
          const std::function<void(const SqlRow&)>& on_row = nullptr);
  std::int64_t last_insert_id() const;
  std::string journal_mode();

 private:
  sqlite3* db_ = nullptr;
  std::filesystem::path file_;
};

// Commits at scope exit unless an exception is in flight (then rolls back).
class SqlTransaction {
 public:
  explicit SqlTransaction(SqliteDb& db);
  ~SqlTransaction();
  void commit();

 private:
  SqliteDb& db_;
  bool done_ = false;
};

}  // namespace maxcode::bot::service
