#include "bot/service/queue/sqlite_db.h"

#include <sqlite3.h>

#include <stdexcept>

#include "runner/util/sqlite.h"

namespace maxcode::bot::service {

namespace {

class SqliteRow : public SqlRow {
 public:
  explicit SqliteRow(sqlite3_stmt* stmt) : stmt_(stmt) {}
  std::string text(int column) const override {
    const unsigned char* p = sqlite3_column_text(stmt_, column);
    return p ? std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, column)) : std::string();
  }
  std::int64_t integer(int column) const override { return sqlite3_column_int64(stmt_, column); }
  double real(int column) const override { return sqlite3_column_double(stmt_, column); }
  bool is_null(int column) const override { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

 private:
  sqlite3_stmt* stmt_;
};

}  // namespace

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
    if (on_row) on_row(SqliteRow(stmt));
  }
  return sqlite3_changes(db_);
}

std::int64_t SqliteDb::last_insert_id() const { return sqlite3_last_insert_rowid(db_); }

std::string SqliteDb::journal_mode() {
  std::string mode;
  run("PRAGMA journal_mode", {}, [&](const SqlRow& r) { mode = r.text(0); });
  return mode;
}

// SQLite's own rowid: INTEGER PRIMARY KEY (exactly) makes the column an alias of it.
std::string SqliteDb::auto_id_column(const std::string& name) const { return name + " INTEGER PRIMARY KEY"; }

void SqliteDb::add_column_if_missing(const std::string& table, const std::string& column, const std::string& declaration) {
  // SQLite has no ADD COLUMN IF NOT EXISTS: ask the table first.
  bool has = false;
  run("SELECT COUNT(*) FROM pragma_table_info(?1) WHERE name = ?2", {table, column},
      [&](const SqlRow& r) { has = r.integer(0) > 0; });
  if (!has) exec("ALTER TABLE " + table + " ADD COLUMN " + column + " " + declaration);
}

std::string SqliteDb::describe() { return "SQLite " + file_.string() + ", " + journal_mode(); }

}  // namespace maxcode::bot::service
