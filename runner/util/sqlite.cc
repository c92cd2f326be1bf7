#include "runner/util/sqlite.h"

namespace maxcode {

sqlite3* open_sqlite(const std::filesystem::path& file,
                     const std::function<std::string(const std::string& why)>& describe) {
  sqlite3* db = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
  if (sqlite3_open_v2(file.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    const std::string why = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    throw std::runtime_error(describe(why));
  }
  sqlite3_busy_timeout(db, 10000);
  return db;
}

std::optional<std::string> exec_sqlite(sqlite3* db, const std::string& sql) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error) == SQLITE_OK) return std::nullopt;
  std::string message = error ? error : "unknown error";
  sqlite3_free(error);
  return message;
}

}  // namespace maxcode
