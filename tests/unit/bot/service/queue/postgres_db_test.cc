// The PostgreSQL engine of the store: SQLite-style placeholders renumbered outside
// literals, passwords never shown, a clear error naming the setting when the server
// cannot be reached or the URL is bad, and values of every type through a real server.
#include "bot/service/queue/postgres_db.h"

#include <gtest/gtest.h>

#include "support/postgres_server.h"

namespace maxcode::bot::service {
namespace {

TEST(PostgresDb, PlaceholdersAreRenumberedOutsideLiterals) {
  EXPECT_EQ(postgres_placeholders("SELECT a FROM t WHERE b = ?1 AND c = ?12"), "SELECT a FROM t WHERE b = $1 AND c = $12");
  EXPECT_EQ(postgres_placeholders("SELECT '?1', \"?2\" WHERE x = ?3 AND y = 'it''s ?4'"),
            "SELECT '?1', \"?2\" WHERE x = $3 AND y = 'it''s ?4'");
  EXPECT_EQ(postgres_placeholders("SELECT ? + 1"), "SELECT ? + 1");  // only numbered ones
}

TEST(PostgresDb, PasswordsAreHidden) {
  EXPECT_EQ(hide_password("postgresql://maxcode:s3cret@db:5432/q"), "postgresql://maxcode:***@db:5432/q");
  EXPECT_EQ(hide_password("postgresql://db/q?user=m&password=s3cret&sslmode=require"),
            "postgresql://db/q?user=m&password=***&sslmode=require");
  EXPECT_EQ(hide_password("postgresql://db/q"), "postgresql://db/q");
}

TEST(PostgresDb, AnUnreachableServerIsAnErrorNamingTheSetting) {
  // A socket dir where nothing listens: refused at once, no network involved.
  try {
    PostgresDb db("postgresql://maxcode:s3cret@/q?host=/nonexistent-dir", "", "store");
    FAIL() << "connected to nothing";
  } catch (const StoreError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("store: cannot connect to PostgreSQL at postgresql://maxcode:***@/q?host=/nonexistent-dir: ", 0), 0u)
        << what;
    EXPECT_EQ(what.find("s3cret"), std::string::npos) << what;
  }
  try {
    open_sql_database("postgresql://db:notaport/q", "", "store");
    FAIL() << "a bad URL was accepted";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("store: "), std::string::npos) << e.what();
  }
}

TEST(PostgresDb, ValuesOfEveryTypeRoundTrip) {
  if (const std::string why = testing::PostgresServer::missing(); !why.empty()) GTEST_SKIP() << why;
  auto db = open_sql_database(testing::PostgresServer::shared().create_database());
  EXPECT_EQ(db->dialect(), SqlDialect::kPostgres);
  db->exec("CREATE TABLE t(" + db->auto_id_column("id") + ", n BIGINT, d DOUBLE PRECISION, s TEXT)");
  const std::int64_t big = 40'000'000'000;  // a GitHub check run id: past 32 bits
  const double when = 1764355200.123456;
  const auto id = db->insert_returning_id("INSERT INTO t(n, d, s) VALUES(?1, ?2, ?3) RETURNING id",
                                          {big, when, std::string("it's \"quoted\" ?1")});
  EXPECT_EQ(id, 1);
  EXPECT_EQ(db->run("INSERT INTO t(n, d, s) VALUES(?1, ?2, ?3)", {nullptr, 0.5, std::string()}), 1);
  int rows = 0;
  db->run("SELECT n, d, s FROM t WHERE id = ?1", {id}, [&](const SqlRow& r) {
    ++rows;
    EXPECT_EQ(r.integer(0), big);
    EXPECT_EQ(r.real(1), when);
    EXPECT_EQ(r.text(2), "it's \"quoted\" ?1");
  });
  EXPECT_EQ(rows, 1);
  db->run("SELECT n FROM t WHERE id = 2", {}, [&](const SqlRow& r) { EXPECT_TRUE(r.is_null(0)); });
  db->add_column_if_missing("t", "extra", "TEXT NOT NULL DEFAULT ''");
  db->add_column_if_missing("t", "extra", "TEXT NOT NULL DEFAULT ''");  // twice: nothing
  EXPECT_THROW(db->run("SELECT nope FROM t"), std::runtime_error);
  // A failed statement inside a transaction rolls it back, and the connection goes on.
  try {
    SqlTransaction tx(*db);
    db->run("UPDATE t SET n = 1");
    db->run("SELECT nope FROM t");
  } catch (const std::runtime_error&) {
  }
  db->run("SELECT COUNT(*) FROM t WHERE n = 1", {}, [&](const SqlRow& r) { EXPECT_EQ(r.integer(0), 0); });
}

}  // namespace
}  // namespace maxcode::bot::service
