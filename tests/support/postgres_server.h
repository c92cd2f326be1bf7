// A PostgreSQL server from Debian's packages (postgresql-15; scripts/setup.sh installs
// it), started for one test program in a temp dir: listening only on a Unix socket in
// that dir, with fsync off (a test's data need not survive the machine). The store tests
// run against it as against SQLite, and replicas of the store are two connections to it.
//
// PostgreSQL refuses to run as root: as root the server runs as the `postgres` system
// user the package creates (runuser), in a dir that user owns.
#pragma once

#include <string>

namespace maxcode::testing {

class PostgresServer {
 public:
  // Why the PostgreSQL tests cannot run here (no initdb/pg_ctl found, or no `postgres`
  // user while root); empty when they can.
  static std::string missing();
  // The program's server, started on first use and stopped when the program exits.
  // Throws (with the server's log) when it cannot start.
  static PostgresServer& shared();

  // A new, empty database; returns its URL (postgresql:///NAME?host=SOCKET_DIR&user=postgres).
  std::string create_database();
  std::string url(const std::string& database) const;
  // The Unix socket's dir (the host in the URLs).
  const std::string& socket_dir() const { return dir_; }

  ~PostgresServer();

 private:
  PostgresServer();
  std::string bin_, dir_, as_postgres_;
  int databases_ = 0;
};

}  // namespace maxcode::testing
