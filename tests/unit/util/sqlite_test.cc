#include "runner/util/sqlite.h"

#include <string>

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace maxcode {
namespace {

TEST(Sqlite, OpensCreatesAndRuns) {
  testing::TempDir dir;
  sqlite3* db = open_sqlite(dir / "a.db", [](const std::string& why) { return why; });
  EXPECT_EQ(exec_sqlite(db, "CREATE TABLE t(x INTEGER); INSERT INTO t VALUES(7);"), std::nullopt);
  SqliteStatement s(db, "SELECT x FROM t", "test");
  ASSERT_TRUE(s.next());
  EXPECT_EQ(s.column_integer(0), 7);
  EXPECT_FALSE(s.next());
  sqlite3_close(db);
}

TEST(Sqlite, ExecGivesSqlitesMessage) {
  testing::TempDir dir;
  sqlite3* db = open_sqlite(dir / "a.db", [](const std::string& why) { return why; });
  const std::optional<std::string> error = exec_sqlite(db, "SELECT * FROM missing");
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("no such table"), std::string::npos);
  sqlite3_close(db);
}

TEST(Sqlite, FailureToOpenIsWordedByTheCaller) {
  testing::TempDir dir;
  try {
    open_sqlite(dir / "missing" / "a.db",
                [](const std::string& why) { return "cannot open the store: " + why; });
    FAIL() << "opened a file in a missing folder";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("cannot open the store: ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace maxcode
