#include "bot/service/sqlite_db.h"

#include <sqlite3.h>

#include <stdexcept>

#include "runner/util/sqlite.h"

namespace maxcode::bot::service {

std::string SqlRow::text(int column) const {
  const unsigned char* p = sqlite3_column_text(stmt_, column);
  return p ? std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, column)) : std::string();
}
std::int64_t SqlRow::integer(int column) const { return sqlite3_column_int64(stmt_, column); }
double SqlRow::real(int column) const { return sqlite3_column_double(stmt_, column); }
bool SqlRow::is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

SqliteDb::SqliteDb(const std::filesystem::path& file) : file_(file) {
  db_ = open_sqlite(file, [&](const std::string& why) {
    return file.string() + ": cannot open the queue database: " + why;
  });
  // WAL: readers (dashboard, metrics) never block the writer; synchronous=NORMAL keeps
  // every committed transaction across a crash of the process (not of the machine).
  exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;");
}

SqliteDb::~SqliteDb() { sqlite3_close(db_); }

void SqliteDb::exec(const std::string& sql) {
  if (auto why = exec_sqlite(db_, sql))
    throw std::runtime_error(file_.string() + ": " + *why + " (in: " + sql.substr(0, 120) + ")");
}

int SqliteDb::run(const std::string& sql, const std::vector<SqlValue>& values,
                  const std::function<void(const SqlRow&)>& on_row) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK)
    throw std::runtime_error(file_.string() + ": " + sqlite3_errmsg(db_) + " (in: " + sql.substr(0, 120) + ")");
  struct Finalize {
    sqlite3_stmt* s;
    ~Finalize() { sqlite3_finalize(s); }
  } finalize{stmt};
  for (std::size_t i = 0; i < values.size(); ++i) {
    const int at = static_cast<int>(i + 1);
    const SqlValue& v = values[i];
    if (std::holds_alternative<std::nullptr_t>(v)) sqlite3_bind_null(stmt, at);
    else if (auto n = std::get_if<std::int64_t>(&v)) sqlite3_bind_int64(stmt, at, *n);
    else if (auto d = std::get_if<double>(&v)) sqlite3_bind_double(stmt, at, *d);
    else {
      const std::string& s = std::get<std::string>(v);
      sqlite3_bind_text(stmt, at, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
    }
  }
  for (;;) {
    const int rc = sqlite3_step(stmt);
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW)
      throw std::runtime_error(file_.string() + ": " + sqlite3_errmsg(db_) + " (in: " + sql.substr(0, 120) + ")");
    if (on_row) on_row(SqlRow(stmt));
  }
  return sqlite3_changes(db_);
}

std::int64_t SqliteDb::last_insert_id() const { return sqlite3_last_insert_rowid(db_); }

std::string SqliteDb::journal_mode() {
  std::string mode;
  run("PRAGMA journal_mode", {}, [&](const SqlRow& r) { mode = r.text(0); });
  return mode;
}

SqlTransaction::SqlTransaction(SqliteDb& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

SqlTransaction::~SqlTransaction() {
  if (done_) return;
  try {
    db_.exec(std::uncaught_exceptions() ? "ROLLBACK" : "COMMIT");
  } catch (...) {
  }
}

void SqlTransaction::commit() {
  done_ = true;
  db_.exec("COMMIT");
}

}  // namespace maxcode::bot::service
