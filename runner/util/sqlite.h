// SQLite as every maxcode store uses it (the rollout and history stores, the service's
// queue database): one way to open a file, to run SQL without results, and a prepared
// statement that finalizes itself.
#pragma once

#include <sqlite3.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

#include "runner/util/secrets.h"

namespace maxcode {

// A connection to `file`, created if missing. Serialized, so that the service's threads
// may share it; a statement that finds the file locked by another connection (a second
// run, the dashboard) waits up to 10 s instead of failing at once. On failure nothing is
// left open and std::runtime_error(describe(SQLite's reason)) is thrown, so each store
// keeps its own wording.
sqlite3* open_sqlite(const std::filesystem::path& file,
                     const std::function<std::string(const std::string& why)>& describe);

// Runs `sql` (one or more statements whose results are not wanted): SQLite's message
// when it fails, nullopt when it does not.
std::optional<std::string> exec_sqlite(sqlite3* db, const std::string& sql);

// Errors throw std::runtime_error prefixed with `owner`, the store's name.

class SqliteStatement {
 public:
  SqliteStatement(sqlite3* db, const char* sql, std::string owner) : db_(db), owner_(std::move(owner)) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK)
      throw std::runtime_error((owner_ + ": ") + sqlite3_errmsg(db));
  }
  ~SqliteStatement() { sqlite3_finalize(stmt_); }
  // Every text stored passes here: none may carry a secret (util/secrets.h).
  SqliteStatement& text(int i, const std::string& value) {
    const std::string v = redact_secrets(value);
    sqlite3_bind_text(stmt_, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  SqliteStatement& real(int i, std::optional<double> v) {
    if (v) sqlite3_bind_double(stmt_, i, *v);
    else sqlite3_bind_null(stmt_, i);
    return *this;
  }
  SqliteStatement& integer(int i, long long v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }
  void run() {
    if (sqlite3_step(stmt_) != SQLITE_DONE)
      throw std::runtime_error((owner_ + ": ") + sqlite3_errmsg(db_));
  }
  bool next() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) throw std::runtime_error((owner_ + ": ") + sqlite3_errmsg(db_));
    return false;
  }
  std::string column_text(int i) const {
    const unsigned char* t = sqlite3_column_text(stmt_, i);
    return t ? reinterpret_cast<const char*>(t) : "";
  }
  double column_real(int i) const { return sqlite3_column_double(stmt_, i); }
  long long column_integer(int i) const { return sqlite3_column_int64(stmt_, i); }
  bool column_null(int i) const { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string owner_;  // names the store in errors
};

}  // namespace maxcode
