#include "bot/service/queue/postgres_db.h"

#include <libpq-fe.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "runner/util/text.h"

namespace maxcode::bot::service {

namespace {

// libpq answers in text (we ask for no binary results): numbers are parsed here.
class PostgresRow : public SqlRow {
 public:
  PostgresRow(const PGresult* result, int row) : result_(result), row_(row) {}
  std::string text(int column) const override {
    return std::string(PQgetvalue(result_, row_, column), PQgetlength(result_, row_, column));
  }
  std::int64_t integer(int column) const override { return std::strtoll(PQgetvalue(result_, row_, column), nullptr, 10); }
  double real(int column) const override { return std::strtod(PQgetvalue(result_, row_, column), nullptr); }
  bool is_null(int column) const override { return PQgetisnull(result_, row_, column) != 0; }

 private:
  const PGresult* result_;
  int row_;
};

struct ResultGuard {
  PGresult* r;
  ~ResultGuard() { PQclear(r); }
};

// libpq's messages end in a newline.
std::string trimmed(const char* message) { return std::string(trim(message ? message : "")); }

}  // namespace

std::string postgres_placeholders(const std::string& sql) {
  std::string out;
  out.reserve(sql.size());
  char quote = 0;  // ' or " while inside a literal or a quoted identifier
  for (std::size_t i = 0; i < sql.size(); ++i) {
    const char c = sql[i];
    if (quote) {
      if (c == quote) quote = 0;  // a doubled quote ('') closes and reopens: same result
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '?' && i + 1 < sql.size() && std::isdigit(static_cast<unsigned char>(sql[i + 1]))) {
      out += '$';
      continue;
    }
    out += c;
  }
  return out;
}

std::string hide_password(const std::string& url) {
  std::string out = url;
  const auto scheme = out.find("://");
  if (scheme != std::string::npos) {
    const auto at = out.find('@', scheme + 3);
    const auto slash = out.find('/', scheme + 3);
    if (at != std::string::npos && (slash == std::string::npos || at < slash)) {
      const auto colon = out.find(':', scheme + 3);
      if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
    }
  }
  for (auto p = out.find("password="); p != std::string::npos; p = out.find("password=", p + 1)) {
    const auto end = out.find('&', p);
    out.replace(p + 9, (end == std::string::npos ? out.size() : end) - p - 9, "***");
  }
  return out;
}

PostgresDb::PostgresDb(const std::string& url, const std::string& password, const std::string& setting)
    : shown_url_(hide_password(url)) {
  // connect_timeout first so that the URL's own wins; the password (from the
  // environment) last so that it wins over one in the URL.
  const char* keys[] = {"connect_timeout", "application_name", "dbname", password.empty() ? nullptr : "password", nullptr};
  const char* values[] = {"10", "maxcode-serve", url.c_str(), password.empty() ? nullptr : password.c_str(), nullptr};
  conn_ = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (!conn_ || PQstatus(conn_) != CONNECTION_OK) {
    const std::string why = conn_ ? trimmed(PQerrorMessage(conn_)) : "out of memory";
    PQfinish(conn_);
    conn_ = nullptr;
    throw StoreError(setting + ": cannot connect to PostgreSQL at " + shown_url_ + ": " + why);
  }
  // CREATE TABLE IF NOT EXISTS and friends send NOTICEs; libpq would print them on stderr.
  PQsetNoticeProcessor(conn_, [](void*, const char*) {}, nullptr);
}

PostgresDb::~PostgresDb() { PQfinish(conn_); }

void PostgresDb::reconnect_if_dropped() {
  if (PQstatus(conn_) == CONNECTION_OK || in_transaction_) return;
  PQreset(conn_);
  if (PQstatus(conn_) != CONNECTION_OK)
    throw std::runtime_error("PostgreSQL at " + shown_url_ + ": connection lost: " + trimmed(PQerrorMessage(conn_)));
}

void PostgresDb::exec(const std::string& sql) {
  reconnect_if_dropped();
  ResultGuard r{PQexec(conn_, sql.c_str())};
  const auto status = PQresultStatus(r.r);
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
    throw std::runtime_error("PostgreSQL at " + shown_url_ + ": " + trimmed(PQresultErrorMessage(r.r)) +
                             " (in: " + sql.substr(0, 120) + ")");
}

int PostgresDb::run(const std::string& sql, const std::vector<SqlValue>& values,
                    const std::function<void(const SqlRow&)>& on_row) {
  reconnect_if_dropped();
  // Every value travels as text with no declared type: the server infers each one's
  // type from where it stands (a BIGINT column, a LIMIT, a comparison with text).
  std::vector<std::string> texts(values.size());
  std::vector<const char*> pointers(values.size(), nullptr);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const SqlValue& v = values[i];
    if (std::holds_alternative<std::nullptr_t>(v)) continue;
    if (auto n = std::get_if<std::int64_t>(&v)) texts[i] = std::to_string(*n);
    else if (auto d = std::get_if<double>(&v)) {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%.17g", *d);  // round-trips every double
      texts[i] = buffer;
    } else texts[i] = std::get<std::string>(v);
    pointers[i] = texts[i].c_str();
  }
  const std::string statement = postgres_placeholders(sql);
  ResultGuard r{PQexecParams(conn_, statement.c_str(), static_cast<int>(values.size()), nullptr, pointers.data(),
                             nullptr, nullptr, 0)};
  const auto status = PQresultStatus(r.r);
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
    throw std::runtime_error("PostgreSQL at " + shown_url_ + ": " + trimmed(PQresultErrorMessage(r.r)) +
                             " (in: " + sql.substr(0, 120) + ")");
  if (on_row)
    for (int row = 0; row < PQntuples(r.r); ++row) on_row(PostgresRow(r.r, row));
  const char* changed = PQcmdTuples(r.r);
  return changed && *changed ? std::atoi(changed) : 0;
}

void PostgresDb::begin() {
  exec("BEGIN");
  in_transaction_ = true;
}

void PostgresDb::commit() {
  in_transaction_ = false;
  exec("COMMIT");
}

void PostgresDb::rollback() {
  in_transaction_ = false;
  exec("ROLLBACK");
}

void PostgresDb::serialize(const std::string& name) {
  // A transaction-scoped advisory lock: released by COMMIT or ROLLBACK, and by the
  // server when the process holding it dies (its connection closes).
  run("SELECT pg_advisory_xact_lock(hashtext(?1))", {name});
}

std::string PostgresDb::auto_id_column(const std::string& name) const {
  return name + " BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY";
}

void PostgresDb::add_column_if_missing(const std::string& table, const std::string& column, const std::string& declaration) {
  exec("ALTER TABLE " + table + " ADD COLUMN IF NOT EXISTS " + column + " " + declaration);
}

std::string PostgresDb::describe() {
  return std::string("PostgreSQL ") + PQhost(conn_) + ":" + PQport(conn_) + "/" + PQdb(conn_) + " (shared by replicas)";
}

}  // namespace maxcode::bot::service
