#include "bot/service/queue/sql_database.h"

#include <exception>

#include "bot/service/queue/postgres_db.h"
#include "bot/service/queue/sqlite_db.h"

namespace maxcode::bot::service {

std::int64_t SqlDatabase::insert_returning_id(const std::string& sql, const std::vector<SqlValue>& values) {
  std::int64_t id = 0;
  run(sql, values, [&](const SqlRow& r) { id = r.integer(0); });
  return id;
}

SqlTransaction::SqlTransaction(SqlDatabase& db) : db_(db) { db_.begin(); }

SqlTransaction::~SqlTransaction() {
  if (done_) return;
  try {
    if (std::uncaught_exceptions()) db_.rollback();
    else db_.commit();
  } catch (...) {
  }
}

void SqlTransaction::commit() {
  done_ = true;
  db_.commit();
}

bool is_postgres_url(const std::string& store) {
  return store.rfind("postgresql://", 0) == 0 || store.rfind("postgres://", 0) == 0;
}

std::unique_ptr<SqlDatabase> open_sql_database(const std::string& store, const std::string& password,
                                               const std::string& setting) {
  if (is_postgres_url(store)) return std::make_unique<PostgresDb>(store, password, setting);
  try {
    return std::make_unique<SqliteDb>(store);
  } catch (const std::exception& e) {
    throw StoreError(setting + ": " + e.what());
  }
}

}  // namespace maxcode::bot::service
